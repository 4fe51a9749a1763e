package bridge

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Redacted replaces a secret in a transcript.
const Redacted = "[redacted]"

// Redact returns the JSON message msg with its secrets replaced by
// [Redacted], re-encoded (for a transcript, never for the wire): the value
// of every member whose name says it holds a credential (one containing
// "authorization", "password", "secret", "cookie", "apikey", "api_key" or
// "api-key", or ending in "token", in any case: "Authorization",
// "accessToken", "GITHUB_TOKEN"; not "inputTokens"), the "value" of every
// {"name", "value"} pair whose name says so (MCP server headers and env),
// every "Bearer …" credential, and every occurrence of one of secrets, in
// any string. ok is false when msg is not JSON.
func Redact(msg []byte, secrets []string) (out json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	v = redactValue(v, secrets)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, false
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), true
}

func redactValue(v any, secrets []string) any {
	switch x := v.(type) {
	case string:
		return redactString(x, secrets)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i], secrets)
		}
	case map[string]any:
		name, _ := x["name"].(string)
		_, hasValue := x["value"]
		pair := hasValue && credentialName(name)
		for k, e := range x {
			if credentialName(k) || (pair && k == "value") {
				x[k] = Redacted
				continue
			}
			x[k] = redactValue(e, secrets)
		}
	}
	return v
}

// credentialName reports whether a member or header name says its value
// is a credential.
func credentialName(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"authorization", "password", "secret", "cookie", "apikey", "api_key", "api-key"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return strings.HasSuffix(k, "token")
}

var bearerRE = regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]+`)

func redactString(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	if strings.Contains(strings.ToLower(s), "bearer") {
		s = bearerRE.ReplaceAllString(s, "$1 "+Redacted)
	}
	return s
}
