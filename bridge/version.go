package bridge

import (
	"bytes"
	"strconv"

	"github.com/acpmux/acpmux/acp"
)

// ProtocolVersion is the ACP major version acpmux speaks with the agent
// and answers hosts with. ACP v2 is a draft some agents already serve when
// a client asks for it; until acpmux translates v2, it asks the agent for
// v1 whatever the first host asked, and a host that asked for a later
// version gets v1, as version negotiation allows (ACP "Initialization",
// https://agentclientprotocol.com/protocol/initialization#version-negotiation).
// See docs/protocol.md.
const ProtocolVersion = 1

// initializeV1 returns the host's initialize request msg with every
// params.protocolVersion member set to ProtocolVersion, cutting only those
// bytes, and its envelope; msg comes back as it was when they already are.
func initializeV1(msg []byte, env acp.Envelope) ([]byte, acp.Envelope, bool) {
	orig := msg
	params := env.Params.Bytes(msg)
	spans := acp.MemberSpans(params, "protocolVersion")
	want := []byte(strconv.Itoa(ProtocolVersion))
	changed := false
	for k := len(spans) - 1; k >= 0; k-- {
		s := spans[k]
		if bytes.Equal(s.Bytes(params), want) {
			continue
		}
		abs := acp.Span{Start: env.Params.Start + s.Start, End: env.Params.Start + s.End}
		msg = acp.WithID(msg, abs, want)
		changed = true
	}
	if !changed {
		return msg, env, false
	}
	out, err := acp.Parse(msg)
	if err != nil { // not expected: one JSON value replaced by another
		return orig, env, false
	}
	return msg, out, true
}

// checkAgentVersion warns when the agent's initialize result names a
// protocol version other than the one acpmux asked for: the relay is built
// for v1 and forwards the result as it came.
func (b *Bridge) checkAgentVersion(result []byte) {
	v := acp.MemberBytes(result, "protocolVersion")
	if v != nil && string(v) != strconv.Itoa(ProtocolVersion) {
		b.log.Warn("agent answered initialize with another ACP protocol version than acpmux asked for", "asked", ProtocolVersion, "got", truncate(v, 32))
	}
}
