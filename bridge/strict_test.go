package bridge_test

import (
	"fmt"
	"testing"
	"time"
)

// TestAnswerWithoutJSONRPC2IsAbstention: a host's answer to a permission
// request whose jsonrpc member is missing or not "2.0" is not an answer:
// the host abstains, the decision stays open, and another host's valid
// answer is the one the agent gets. The host that sent it gets no response.
func TestAnswerWithoutJSONRPC2IsAbstention(t *testing.T) {
	for name, envelope := range map[string]string{
		"missing": `{"id":%v,"result":%s}`,
		"1.0":     `{"jsonrpc":"1.0","id":%v,"result":%s}`,
		"number":  `{"jsonrpc":2.0,"id":%v,"result":%s}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newBrokerFixture(t, permScriptHead+permRequest(1)+"recv\n", time.Minute, false)
			ideID, _ := expectPermission(t, f.ide)
			second := f.add("second", false, 0)
			second.send(`{"jsonrpc":"2.0","id":"att","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"pending_only"}}`)
			if m := second.next(); m["id"] != "att" || m["result"] == nil {
				t.Fatalf("attach: %v", m)
			}
			secondID, _ := expectPermission(t, second)
			f.ide.send(fmt.Sprintf(envelope, ideID, selectedAllow))
			// A marker request after it: the IDE's next message must be its
			// answer, not an error response to the invalid answer.
			f.ide.send(`{"jsonrpc":"2.0","id":"mark","method":"session/attach","params":{"sessionId":"nope"}}`)
			if m := f.ide.next(); m["id"] != "mark" {
				t.Fatalf("IDE got %v before the answer to its marker request", m)
			}
			second.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%s}`, secondID, selectedReject))
			if got := f.waitAgent(1); got != selectedReject {
				t.Errorf("agent got %s, want the second host's reject", got)
			}
		})
	}
}
