package question

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseFields turns the answer fields of the command line (each
// "name=value", from repeated --field flags of acpmux decisions answer)
// into content for an accept answer, typed by s: a string property takes
// the value as it is; number a decimal (float64), integer a whole number
// (int64), boolean "true" or "false"; array the comma-separated members
// ("" is no member; a member that holds a comma needs --content JSON). The
// name is everything before the first "=". A field without "=", a name
// that is not a property or given twice, or a value that does not parse
// returns a [*FieldError] naming content.NAME. The content still goes
// through [Question.Validate] where it is answered.
func (s *Schema) ParseFields(fields []string) (map[string]any, error) {
	content := make(map[string]any, len(fields))
	for _, f := range fields {
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			return nil, &FieldError{Reason: fmt.Sprintf("field %q: want name=value", f)}
		}
		p, ok := s.Property(name)
		if !ok {
			return nil, &FieldError{Field: contentField(name), Reason: "is not a property of the requested schema"}
		}
		if _, dup := content[name]; dup {
			return nil, &FieldError{Field: contentField(name), Reason: "is given twice"}
		}
		v, reason := p.parseField(value)
		if reason != "" {
			return nil, &FieldError{Field: contentField(name), Reason: reason}
		}
		content[name] = v
	}
	return content, nil
}

// parseField parses one command-line value for p.
func (p *Property) parseField(value string) (any, string) {
	switch p.Type {
	case TypeNumber:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Sprintf("%q is not a number", value)
		}
		return f, ""
	case TypeInteger:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return nil, fmt.Sprintf("%q is not an integer", value)
		}
		return n, ""
	case TypeBoolean:
		switch value {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, fmt.Sprintf("%q is not true or false", value)
	case TypeArray:
		if value == "" {
			return []string{}, ""
		}
		return strings.Split(value, ","), ""
	}
	return value, ""
}
