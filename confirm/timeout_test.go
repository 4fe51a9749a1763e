package confirm_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

func TestTimeoutFailsClosed(t *testing.T) {
	tests := []struct {
		name    string
		options []string
		timeout time.Duration
		want    string
	}{
		{"reject_once preferred", []string{"a:allow_always", "ra:reject_always", "ro:reject_once"}, 0, selected("ro")},
		{"else reject_always", []string{"a:allow_once", "ra:reject_always"}, time.Hour, selected("ra")},
		{"else cancelled", []string{"a:allow_once", "b:allow_always"}, confirm.MaxTimeout, cancelledResult},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBroker(t, confirm.Options{})
				never := newHost("never")
				r := req("s", "k", tt.options...)
				r.Timeout = tt.timeout
				start := time.Now()
				got, err := b.Ask(context.Background(), r, []confirm.Presenter{never})
				if err != nil {
					t.Fatal(err)
				}
				jsonEq(t, got, tt.want)
				want := tt.timeout
				if want == 0 {
					want = confirm.DefaultTimeout
				}
				if el := time.Since(start); el != want {
					t.Fatalf("timed out after %v, want %v", el, want)
				}
				d := <-never.presented
				v := d.View()
				if v.Status != store.StatusTimedOut || v.Reason != store.ReasonTimeout || v.Deadline.Sub(v.CreatedAt) != want {
					t.Fatalf("status %s reason %s deadline-created %v", v.Status, v.Reason, v.Deadline.Sub(v.CreatedAt))
				}
				if evs := eventTypes(v); count(evs, "timed_out") != 1 || count(evs, "withdrawn@never") != 1 {
					t.Fatalf("journal %v", evs)
				}
				if w := never.withdrawals(); len(w) != 1 || w[0].Status != store.StatusTimedOut {
					t.Fatalf("withdrawals %+v", w)
				}
			})
		})
	}
}

func TestDefaultTimeoutOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, confirm.Options{DefaultTimeout: 30 * time.Second})
		start := time.Now()
		got, _ := b.Ask(context.Background(), req("s", "k"), []confirm.Presenter{newHost("never")})
		jsonEq(t, got, selected("reject-once"))
		if el := time.Since(start); el != 30*time.Second {
			t.Fatalf("elapsed %v", el)
		}
	})
}

func TestRunShutdownCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, confirm.Options{})
		ctx, stop := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- b.Run(ctx) }()
		ide := newHost("ide")
		ch := ask(b, req("s", "k"), ide)
		<-ide.presented
		stop()
		if err := <-ran; err != nil {
			t.Fatal(err)
		}
		jsonEq(t, (<-ch).result, cancelledResult)
		got, _ := b.Ask(context.Background(), req("s", "late"), []confirm.Presenter{ide})
		jsonEq(t, got, cancelledResult)
	})
}
