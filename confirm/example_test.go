package confirm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/acpmux/acpmux/confirm"
)

// ideHost answers every decision with the first offered option, as an IDE
// whose user clicks the first button.
type ideHost struct {
	b    *confirm.Broker
	done chan struct{}
}

func (h *ideHost) HostID() string { return "ide" }
func (h *ideHost) Present(d *confirm.Decision) error {
	go func() { // Present must not block: answer from another goroutine
		defer close(h.done)
		res := fmt.Sprintf(`{"outcome":{"outcome":"selected","optionId":%q}}`, d.Options()[0].OptionID)
		_ = h.b.AnswerResult(context.Background(), d.ID(), h.HostID(), json.RawMessage(res))
	}()
	return nil
}
func (h *ideHost) Withdraw(*confirm.Decision, confirm.Resolution) {}
func (h *ideHost) Won(*confirm.Decision, confirm.Resolution)      {}

func ExampleBroker_Ask() {
	b, _ := confirm.NewBroker(confirm.Options{Logger: slog.New(slog.DiscardHandler)})
	params := json.RawMessage(`{"sessionId":"sess_1","toolCall":{"toolCallId":"call_1","title":"Run make"},
		"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},
		           {"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`)
	ide := &ideHost{b: b, done: make(chan struct{})}
	result, err := b.Ask(context.Background(),
		confirm.Request{SessionID: "sess_1", AgentKey: "epoch1/n5", Params: params}, []confirm.Presenter{ide})
	<-ide.done
	fmt.Println(string(result), err)

	// An agent request without options is refused with -32602.
	_, err = b.Ask(context.Background(), confirm.Request{SessionID: "sess_1", AgentKey: "epoch1/n6",
		Params: json.RawMessage(`{"sessionId":"sess_1","toolCall":{"toolCallId":"call_2"},"options":[]}`)}, []confirm.Presenter{ide})
	fmt.Println(err)
	// Output:
	// {"outcome":{"outcome":"selected","optionId":"allow-once"}} <nil>
	// jsonrpc2 error -32602: invalid params: at least one permission option is required
}
