package bridge

import (
	"bytes"

	"github.com/acpmux/acpmux/acp"
)

// SessionAlive reports whether session sid is known to the bridge and its
// agent is still running: the revalidation a confirmation needs before its
// answer reaches the agent (docs/decisions.md). It implements
// [confirm.Sessions]. A teammate's session "teammate:NAME/SESSION" is
// alive while teammate NAME is connected (docs/teammates.md). Safe for
// concurrent use.
func (b *Bridge) SessionAlive(sid string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if name, ok := teammateOfSession(sid); ok && (b.sessions[sid] == nil || b.sessions[sid].teammate != "") {
		return b.teammates[name] != nil && !b.agentGone
	}
	return b.sessions[sid] != nil && !b.agentGone
}

// addSessionLocked records that host h created, loaded or resumed session
// sid; h becomes its owner and one of its hosts. b.mu is held.
func (b *Bridge) addSessionLocked(sid, cwd string, h *Host) {
	if sid == "" {
		return
	}
	s := b.sessions[sid]
	if s == nil {
		s = &session{id: sid, replay: newReplayLog(b.opts.ReplayMaxBytes)}
		b.sessions[sid] = s
	}
	if cwd != "" {
		s.cwd = cwd
	}
	s.owner = h
	s.addHost(h)
}

// addHost adds h to the session's hosts. hosts is copy-on-write, so a
// reader may use the slice it got under the lock after releasing it.
func (s *session) addHost(h *Host) {
	for _, x := range s.hosts {
		if x == h {
			return
		}
	}
	hosts := make([]*Host, len(s.hosts), len(s.hosts)+1)
	copy(hosts, s.hosts)
	s.hosts = append(hosts, h)
}

// removeHost removes h from the session (copy-on-write).
func (s *session) removeHost(h *Host) {
	for i, x := range s.hosts {
		if x == h {
			hosts := make([]*Host, 0, len(s.hosts)-1)
			hosts = append(hosts, s.hosts[:i]...)
			s.hosts = append(hosts, s.hosts[i+1:]...)
			break
		}
	}
	if s.owner == h {
		s.owner = nil
	}
	if s.turn == h {
		s.turn = nil
	}
}

// sessionByRaw returns the session whose id is the raw JSON string sid, or
// nil. The lookup does not allocate unless the id has escapes. b.mu is held.
func (b *Bridge) sessionByRaw(sid []byte) *session {
	if len(sid) < 2 || sid[0] != '"' {
		return nil
	}
	if bytes.IndexByte(sid, '\\') < 0 {
		return b.sessions[string(sid[1:len(sid)-1])]
	}
	s, _ := acp.StringValue(sid)
	return b.sessions[s]
}
