// Package initgc holds the garbage collector off while the binary's packages initialise, gives it back
// when package main's own initialiser, the last, calls Restore, and lets the first collection after that
// wait for a heap four times the runtime's first goal (firstHeapFactor).
//
// Every run of catalogbot runs the initialisers of every package it links, whatever the verb: about
// 4.2 MB of allocations (operator-framework's validators' dependency tree 2 MB of them), most of it
// compiled regular expressions, maps and descriptors that live as long as the process. The runtime's
// first heap goal is 4 MB, so the initialisers alone started one or two collections on every run, each
// marking a heap that is almost all still live, with its worker threads and their page-table shootdowns
// (docs/benchmarks.md, start-up).
//
// Go initialises a package once its imports are, the ready ones in import-path order, so this package
// runs as soon as os, runtime/debug and sync have (the 239th of the binary's 468 initialisers, with
// 1.3 MB allocated): early enough that no collection starts. internal/archtest's
// TestStartupInitialisersStayCheap fails if one starts while packages initialise. Import it from package
// main only, and call Restore from its init: a test binary never runs main.
package initgc

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// percent is the GOGC value in force before init turned collection off (100, or what GOGC says).
var percent = debug.SetGCPercent(-1)

// firstHeapFactor makes the first collection after the initialisers wait for a heap of 16 MB: four times
// the runtime's own first goal (the goal is 4 MB times GOGC/100 until a collection has measured the live
// heap, so GOGC is multiplied by the factor until then). A hook's or a small catalog's whole run then
// allocates less than that, and what it allocates it mostly keeps (the catalog's model), so collections
// found little to free: on two cores each took one of them from the load, with its write barriers, for
// nothing. community-operators-prod v4.20's validate ran three and took a fifth longer with them, in about
// the same private memory (docs/benchmarks.md, "2026-12-02 17:45"). After the first collection, the usual
// pace: a large catalog's run peaks as it did (it collected at 16 MB or more anyway).
const firstHeapFactor = 4

var once sync.Once

// Restore gives the collector back its GOGC setting, with the first collection waiting (firstHeapFactor);
// package main's init calls it. When GOGC is set, or collection is off, it is GOGC's pace from the
// start. Calling it again does nothing more.
func Restore() {
	once.Do(func() {
		if percent <= 0 || os.Getenv("GOGC") != "" {
			debug.SetGCPercent(percent)
			return
		}
		debug.SetGCPercent(percent * firstHeapFactor)
		// a cleanup of an object nothing refers to runs after the first collection
		runtime.AddCleanup(new(sentinel), func(p int) { debug.SetGCPercent(p) }, percent)
	})
}

// sentinel is large enough, and holds a pointer, to be its own allocation (a tiny one may share a block
// that lives on).
type sentinel struct {
	_ *sentinel
	_ [3]uintptr
}
