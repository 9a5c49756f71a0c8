// Package initgc holds the garbage collector off while the binary's packages initialise, and gives it back
// when package main's own initialiser, the last, calls Restore.
//
// Every run of catalogbot runs the initialisers of every package it links, whatever the verb: about
// 4.6 MB of allocations (operator-framework's validators' dependency tree 2 MB of them), most of it
// compiled regular expressions, maps and descriptors that live as long as the process. The runtime's
// first heap goal is 4 MB, so the initialisers alone started one or two collections on every run, each
// marking a heap that is almost all still live, with its worker threads and their page-table shootdowns
// (docs/benchmarks.md, start-up).
//
// Go initialises a package once its imports are, the ready ones in import-path order, so this package
// runs as soon as runtime/debug has (the 240th of the binary's 467 initialisers, with 1.7 MB
// allocated): early enough that no collection starts. internal/archtest's
// TestStartupInitialisersStayCheap fails if one starts while packages initialise. Import it from package
// main only, and call Restore from its init: a test binary never runs main.
package initgc

import "runtime/debug"

// percent is the GOGC value in force before init turned collection off (100, or what GOGC says).
var percent = debug.SetGCPercent(-1)

// Restore gives the collector back its GOGC setting; package main's init calls it. Calling it again does
// nothing more.
func Restore() { debug.SetGCPercent(percent) }
