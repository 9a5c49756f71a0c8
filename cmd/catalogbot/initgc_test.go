package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// internal/initgc turns the garbage collector off while packages initialise; package main's init, the last
// of them, gives it back. Were it given back only in main(), a process that never runs main (this test
// binary) would run without collections.
func TestGarbageCollectorOnAfterInit(t *testing.T) {
	if os.Getenv("GOGC") == "off" {
		t.Skip("GOGC=off")
	}
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	if p < 0 {
		t.Fatal("the garbage collector is off after package initialisation")
	}
}
