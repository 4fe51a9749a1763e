// Package bridge relays ACP (JSON-RPC 2.0 over newline-delimited JSON)
// between one agent process and many hosts.
//
// The bridge parses only the envelope of each message (acp.Parse) and
// forwards payloads byte-for-byte, replacing only the id: host → agent
// requests get a fresh bridge id and their original id bytes back on the
// response; agent → host requests get a fresh, never-reused id per host.
// session/update notifications go to every host of the session and into the
// session's replay log; fs/* and terminal/* go only to the session's owning
// host; session/request_permission goes to the permission router.
//
// Every host has one reader goroutine and one writer goroutine draining a
// bounded queue. The agent's read loop never waits for a remote host: a
// remote host whose queue is full is disconnected. The owning stdio host
// (the IDE that launched acpmux) is the exception: like a direct pipe, it
// applies backpressure to the agent instead of being dropped.
//
// Follows ACP v1 (https://agentclientprotocol.com/protocol/v1) and the
// request-cancellation RFD ($/cancel_request).
package bridge
