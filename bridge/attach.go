package bridge

import (
	"encoding/json"
	"fmt"

	"github.com/acpmux/acpmux/acp"
)

// MethodSessionAttach is the proxy-local request a host sends to join a
// session another host created (ACP RFD draft "Multi-Client Session
// Attach", PR #533): params {sessionId, historyPolicy: "full" |
// "pending_only" | "none"} (default "full"); result {sessionId, clientId,
// historyPolicy (what the host gets: "pending_only" for "full" when the
// bridge keeps no replay log), connectedClients}. After the result the host receives the
// session's replay log ("full"), then every still-open permission request
// ("full" and "pending_only"), then live traffic. It is answered by acpmux
// and never reaches the agent. See docs/protocol.md.
const MethodSessionAttach = "session/attach"

// History policies of session/attach.
const (
	HistoryFull        = "full"
	HistoryPendingOnly = "pending_only"
	HistoryNone        = "none"
)

// attach joins h to a session: the response, the replay and the pending
// permission requests are queued to h in that order, under the lock, so no
// live message can overtake them.
func (b *Bridge) attach(h *Host, id, params []byte) {
	sid := acp.MemberString(params, "sessionId")
	policy := acp.MemberString(params, "historyPolicy")
	if policy == "" {
		policy = HistoryFull
	}
	if policy != HistoryFull && policy != HistoryPendingOnly && policy != HistoryNone {
		b.replyError(h, id, fmt.Errorf("%w: historyPolicy %q: want full, pending_only or none", acp.ErrInvalidParams, policy))
		return
	}
	b.mu.Lock()
	s := b.sessions[sid]
	if s == nil {
		b.mu.Unlock()
		b.replyError(h, id, fmt.Errorf("%w: session %q", acp.ErrResourceNotFound, sid))
		return
	}
	if policy == HistoryFull && s.replay == nil {
		policy = HistoryPendingOnly // no replay log is kept (Options.ReplayMaxBytes): say what the host gets
	}
	s.addHost(h)
	clients := make([]string, 0, len(s.hosts))
	for _, x := range s.hosts {
		clients = append(clients, x.ID)
	}
	result, _ := json.Marshal(map[string]any{"sessionId": sid, "clientId": h.ID, "historyPolicy": policy, "connectedClients": clients})
	h.send(resultMessage(id, result))
	if policy == HistoryFull {
		// The replay is one hand-over that counts as one message of the
		// host's queue (its bytes count whole): a session with more entries
		// than --host-queue is joined like any other, and the host's live
		// messages queue behind it.
		if msgs := s.replay.messages(); len(msgs) > 0 {
			hb := hostBatch{msgs: msgs, n: 1}
			for _, m := range msgs {
				hb.bytes += len(m)
			}
			h.sendBatch(hb)
		}
	}
	b.mu.Unlock()
	b.log.Info("host attached to session", "host", h.ID, "session", sid, "historyPolicy", policy)
	if policy != HistoryNone && h.mayAnswer() {
		if b.broker != nil {
			b.broker.AddPresenter(sid, hostPresenter{h})
		}
	}
}
