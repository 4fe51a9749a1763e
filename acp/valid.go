package acp

import "github.com/tidwall/gjson"

// MaxDepth is the deepest nesting of arrays and objects a message may
// have. The validator recurses once per level, so a line of a few
// megabytes of '[' would otherwise overflow the stack and end the process;
// encoding/json refuses the same depth.
const MaxDepth = 10000

// valid reports whether line is exactly one valid JSON value (RFC 8259),
// nested at most MaxDepth deep, as encoding/json.Valid does, several times
// faster: it runs on every message the bridge relays. FuzzValid checks
// that both always agree. Lines too short to nest past MaxDepth skip the
// depth scan.
func valid(line []byte) bool {
	if len(line) > 2*MaxDepth && tooDeep(line) {
		return false
	}
	return gjson.ValidBytes(line)
}

// tooDeep reports whether line nests arrays and objects more than
// MaxDepth deep, outside strings. It does not validate.
func tooDeep(line []byte) bool {
	depth, inString := 0, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > MaxDepth {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}
