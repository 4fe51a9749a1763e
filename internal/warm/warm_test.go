package warm_test

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/internal/leakcheck"
	"github.com/acpmux/acpmux/internal/warm"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// goroutineID returns an identity of the calling goroutine: the address
// of a variable on its stack would move with the stack, so it uses the
// goroutine number runtime.Stack prints.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	for i := len("goroutine "); i < len(buf); i++ {
		if buf[i] == ' ' {
			return string(buf[len("goroutine "):i])
		}
	}
	return string(buf)
}

// TestFunctionsRunOnTheGoroutineThatWaits: a function handed to the pool
// while a goroutine of it waits runs on that goroutine, not a new one; a
// goroutine that waited linger for nothing ends; so does an idle one when
// the pool closes.
func TestFunctionsRunOnTheGoroutineThatWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := warm.New(time.Second)
		defer p.Close()
		ran := make(chan string)
		p.Go(func() { ran <- goroutineID() })
		first := <-ran
		synctest.Wait() // the goroutine is idle, waiting for work
		p.Go(func() { ran <- goroutineID() })
		if second := <-ran; second != first {
			t.Fatalf("second function ran on goroutine %s, want the idle %s", second, first)
		}
		time.Sleep(2 * time.Second) // idle past linger: it ends
		synctest.Wait()
		p.Go(func() { ran <- goroutineID() })
		if third := <-ran; third == first {
			t.Fatalf("a goroutine idle past linger still ran a function")
		}
	})
}

// TestBusyGoroutinesAreNotWaitedFor: Go never waits for a busy goroutine;
// every function runs at once, each on its own goroutine while the others
// run.
func TestBusyGoroutinesAreNotWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := warm.New(time.Second)
		defer p.Close()
		release := make(chan struct{})
		var started sync.WaitGroup
		for range 10 {
			started.Add(1)
			p.Go(func() { started.Done(); <-release })
		}
		started.Wait() // all ten run at once
		close(release)
	})
}

// TestCloseEndsIdleGoroutines: Close ends the pool's idle goroutine at
// once (not after linger), and a function handed to the pool afterwards
// still runs.
func TestCloseEndsIdleGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := warm.New(time.Hour)
		before := runtime.NumGoroutine()
		done := make(chan struct{})
		p.Go(func() { done <- struct{}{} })
		<-done
		synctest.Wait()
		if n := runtime.NumGoroutine(); n != before+1 {
			t.Fatalf("%d goroutines while one waits for work, want %d", n, before+1)
		}
		start := time.Now()
		p.Close()
		synctest.Wait()
		if n := runtime.NumGoroutine(); n != before || time.Since(start) != 0 {
			t.Fatalf("after Close: %d goroutines, %v later; want %d at once", n, time.Since(start), before)
		}
		p.Go(func() { close(done) })
		<-done
		p.Close()
	})
}
