//go:build race

package main

// raceEnabled reports a -race build: the race detector costs 5-10 times the memory
// (https://go.dev/doc/articles/race_detector#Runtime_Overheads).
const raceEnabled = true
