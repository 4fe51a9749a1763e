package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signalContext returns a context cancelled when SIGINT or SIGTERM arrives
// (its cause says which, as signal.NotifyContext's does), a function that
// reports the signal that cancelled it (0 if none), and a stop function
// that must be called to release the signal handler.
func signalContext() (ctx context.Context, received func() syscall.Signal, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	var (
		mu  sync.Mutex // guards sig
		sig syscall.Signal
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case s := <-c:
			mu.Lock()
			sig = s.(syscall.Signal)
			mu.Unlock()
			cancel(errors.New(s.String() + " signal received"))
		case <-ctx.Done():
		}
	}()
	received = func() syscall.Signal {
		mu.Lock()
		defer mu.Unlock()
		return sig
	}
	stop = func() {
		signal.Stop(c)
		cancel(context.Canceled)
		<-done
	}
	return ctx, received, stop
}

// signalStatus is the exit status a shell reports for a process that sig
// ended: 128+N (130 for SIGINT, 143 for SIGTERM).
func signalStatus(sig syscall.Signal) int { return 128 + int(sig) }
