package confirm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/store"
)

// TestAutoApproveRules: with Options.AutoApprove a decision the policy
// leaves to ask is answered with its offered allow_once option by
// acpmux:auto-approve, journalled, and shown to no host; an exact plan-mode
// one-off is never auto-approved (asked when a host can ask, refused with
// the auto-approve message when none can); a prompt that offers no
// allow_once is never turned into a one-time grant; deny and plan blocks
// stay as they are.
func TestAutoApproveRules(t *testing.T) {
	ctx := context.Background()
	t.Run("ask is answered allow_once", func(t *testing.T) {
		b := newBroker(t, confirm.Options{Classify: classifyCmd, AutoApprove: true})
		ide := newHost("ide")
		ch := ask(b, toolReq("s", "k1", "execute", "make test"), ide)
		if opt, _ := outcome(t, await(t, ch).result); opt != "allow-once" {
			t.Fatalf("agent got %s, want allow-once", opt)
		}
		if len(ide.presented) > 0 {
			t.Error("a host was asked")
		}
		vs, err := b.Decisions(ctx, "s")
		if err != nil || len(vs) != 1 || vs[0].ResolvedBy != confirm.AutoApproveHost || vs[0].Status != store.StatusAnswered {
			t.Fatalf("decisions %+v %v, want one answered by %s", vs, err, confirm.AutoApproveHost)
		}
	})
	t.Run("no allow_once offered is asked", func(t *testing.T) {
		b := newBroker(t, confirm.Options{Classify: classifyCmd, AutoApprove: true})
		ide := newHost("ide")
		p := `{"sessionId":"s","toolCall":{"toolCallId":"c","title":"make","kind":"execute","rawInput":{"command":"make"}},"options":[{"optionId":"always","name":"Always","kind":"allow_always"},{"optionId":"no","name":"No","kind":"reject_once"}]}`
		ch := ask(b, confirm.Request{SessionID: "s", AgentKey: "k2", Params: json.RawMessage(p), Cwd: "/work"}, ide)
		d := ide.wait(t)
		b.Answer(ctx, "s", d.ID(), "ide", confirm.Answer{OptionID: "no"})
		if opt, _ := outcome(t, await(t, ch).result); opt != "no" {
			t.Fatalf("agent got %s, want the host's no", opt)
		}
	})
	for _, hosts := range []int{1, 0} {
		t.Run(fmt.Sprintf("plan one-off with %d hosts", hosts), func(t *testing.T) {
			b := newBroker(t, confirm.Options{Classify: classifyCmd, AutoApprove: true, Mode: gate.ModePlan})
			ide := newHost("ide")
			var ps []confirm.Presenter
			if hosts > 0 {
				ps = append(ps, ide)
			}
			ch := ask(b, toolReq("s", "k3", "execute", "make test"), ps...)
			if hosts > 0 {
				d := ide.wait(t)
				b.Answer(ctx, "s", d.ID(), "ide", confirm.Answer{OptionID: "reject-once"})
				if opt, _ := outcome(t, await(t, ch).result); opt != "reject-once" {
					t.Fatalf("agent got %s, want the host's reject", opt)
				}
				return
			}
			opt, msg := outcome(t, await(t, ch).result)
			if opt != "reject-once" || msg != gate.AutoApproveRefusedMessage {
				t.Fatalf("agent got %s %q, want reject-once with the auto-approve refusal", opt, msg)
			}
		})
	}
	t.Run("plan write stays blocked", func(t *testing.T) {
		b := newBroker(t, confirm.Options{Classify: classifyCmd, AutoApprove: true, Mode: gate.ModePlan})
		ch := ask(b, toolReq("s", "k4", "execute", "rm -rf build"), newHost("ide"))
		if opt, msg := outcome(t, await(t, ch).result); opt != "reject-once" || msg != gate.WriteBlockMessage {
			t.Fatalf("agent got %s %q, want the plan block", opt, msg)
		}
	})
}
