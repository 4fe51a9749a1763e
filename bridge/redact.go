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
// any string and in any member name. ok is false when msg is not JSON.
func Redact(msg []byte, secrets []string) (out json.RawMessage, ok bool) {
	return redactor{secrets: secrets}.redact(msg)
}

// redactor is what [Redact] and a [Recorder] replace: secrets, and the
// token-shaped substrings isToken recognises (nil: none).
type redactor struct {
	secrets []string
	isToken func(string) bool
}

func (rd redactor) redact(msg []byte) (out json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	v = rd.value(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, false
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), true
}

func (rd redactor) value(v any) any {
	switch x := v.(type) {
	case string:
		return rd.string(x)
	case []any:
		for i := range x {
			x[i] = rd.value(x[i])
		}
	case map[string]any:
		name, _ := x["name"].(string)
		_, hasValue := x["value"]
		pair := hasValue && credentialName(name)
		out := make(map[string]any, len(x))
		for k, e := range x {
			if credentialName(k) || (pair && k == "value") {
				e = Redacted
			} else {
				e = rd.value(e)
			}
			out[rd.string(k)] = e // a secret used as a member name too
		}
		return out
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

// tokenShapedRE finds runs of hex digits long enough to hold a token
// minted by acpmux (64 hex digits: acpmux token add, the --token-file).
var tokenShapedRE = regexp.MustCompile(`[0-9a-fA-F]{64,}`)

// TokenLen is the length of a token acpmux mints: 32 random bytes in
// lowercase hex.
const TokenLen = 64

func (rd redactor) string(s string) string {
	s = redactString(s, rd.secrets)
	if rd.isToken == nil {
		return s
	}
	runs := tokenShapedRE.FindAllStringIndex(s, -1)
	if runs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, run := range runs {
		for i := run[0]; i+TokenLen <= run[1]; {
			if !rd.isToken(strings.ToLower(s[i : i+TokenLen])) {
				i++
				continue
			}
			b.WriteString(s[last:i])
			b.WriteString(Redacted)
			i += TokenLen
			last = i
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

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
