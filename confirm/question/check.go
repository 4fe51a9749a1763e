package question

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// jsonNumber matches a JSON number literal (RFC 8259 §6); a json.Number
// from a Go caller may hold anything.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// maxSafeInteger is 2^53, the largest magnitude every JSON peer
// (JavaScript included) reads as the same integer.
const maxSafeInteger = 1 << 53

// check validates one content value against p and returns it normalised
// (string, float64, int64, bool or []string), or a reason for refusal.
func (p *Property) check(v any) (any, string) {
	switch p.Type {
	case TypeString:
		s, ok := v.(string)
		if !ok {
			return nil, "must be a string, not " + kindOf(v)
		}
		return s, p.checkString(s)
	case TypeNumber:
		f, reason := toNumber(v)
		if reason == "" {
			reason = p.checkRange(f)
		}
		return f, reason
	case TypeInteger:
		n, reason := toInteger(v)
		if reason == "" {
			reason = p.checkRange(float64(n))
		}
		return n, reason
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, "must be true or false, not " + kindOf(v)
		}
		return b, ""
	case TypeArray:
		return p.checkArray(v)
	}
	return nil, "has an unsupported type" // Compile admits no other type
}

// kindOf names the JSON type of a decoded value for a refusal.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, float32, int, int64:
		return "a number"
	case []any, []string:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

func (p *Property) checkString(s string) string {
	if p.isEnum() && !p.member(s) {
		return fmt.Sprintf("%q is not one of the offered values", s)
	}
	n := utf8.RuneCountInString(s)
	if p.MinLength != nil && n < *p.MinLength {
		return fmt.Sprintf("must have at least %d characters, has %d", *p.MinLength, n)
	}
	if p.MaxLength != nil && n > *p.MaxLength {
		return fmt.Sprintf("must have at most %d characters, has %d", *p.MaxLength, n)
	}
	if p.pattern != nil && !p.pattern.MatchString(s) {
		return fmt.Sprintf("does not match the pattern %q", p.Pattern)
	}
	if p.Format != "" && !validFormat(p.Format, s) {
		return fmt.Sprintf("is not a valid %s", p.Format)
	}
	return ""
}

// validFormat reports whether s is in format f.
func validFormat(f Format, s string) bool {
	switch f {
	case FormatEmail:
		a, err := mail.ParseAddress(s)
		return err == nil && a.Name == "" && a.Address == s
	case FormatURI:
		if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return false
		}
		u, err := url.Parse(s)
		return err == nil && u.IsAbs()
	case FormatDate:
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case FormatDateTime:
		_, err := time.Parse(time.RFC3339, s)
		return err == nil
	}
	return false
}

// toNumber reads a finite number.
func toNumber(v any) (float64, string) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		if !jsonNumber.MatchString(string(n)) {
			return 0, "must be a number"
		}
		var err error
		if f, err = strconv.ParseFloat(string(n), 64); err != nil {
			return 0, "is out of range"
		}
	case float64:
		f = n
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	default:
		return 0, "must be a number, not " + kindOf(v)
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, "must be a finite number"
	}
	return f, ""
}

// toInteger reads a whole number within ±2^53.
func toInteger(v any) (int64, string) {
	r := new(big.Rat)
	switch n := v.(type) {
	case json.Number:
		if !jsonNumber.MatchString(string(n)) {
			return 0, "must be a number"
		}
		if len(n) > 400 || bigExponent(string(n)) { // big.Rat would expand 1e1000000000
			return 0, "is out of range"
		}
		if _, ok := r.SetString(string(n)); !ok {
			return 0, "must be a number"
		}
	case float64:
		if math.IsInf(n, 0) || math.IsNaN(n) {
			return 0, "must be a finite number"
		}
		r.SetFloat64(n)
	case int:
		r.SetInt64(int64(n))
	case int64:
		r.SetInt64(n)
	default:
		return 0, "must be an integer, not " + kindOf(v)
	}
	if !r.IsInt() {
		return 0, "must be an integer, without a fractional part"
	}
	if r.Num().CmpAbs(big.NewInt(maxSafeInteger)) > 0 {
		return 0, "is out of range (at most 2^53 in magnitude)"
	}
	return r.Num().Int64(), ""
}

// bigExponent reports whether the JSON number s has an exponent above 400
// in magnitude.
func bigExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return false
	}
	e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	return err != nil || e > 400 || e < -400
}

func (p *Property) checkRange(f float64) string {
	if p.Minimum != nil && f < *p.Minimum {
		return fmt.Sprintf("must be at least %v", *p.Minimum)
	}
	if p.Maximum != nil && f > *p.Maximum {
		return fmt.Sprintf("must be at most %v", *p.Maximum)
	}
	return ""
}

// checkArray validates a multi select.
func (p *Property) checkArray(v any) (any, string) {
	var items []string
	switch a := v.(type) {
	case []string:
		items = append([]string{}, a...)
	case []any:
		items = make([]string, len(a))
		for i, e := range a {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Sprintf("item %d must be a string, not %s", i, kindOf(e))
			}
			items[i] = s
		}
	default:
		return nil, "must be an array, not " + kindOf(v)
	}
	seen := map[string]bool{}
	for i, s := range items {
		if !p.member(s) {
			return nil, fmt.Sprintf("item %d: %q is not one of the offered values", i, s)
		}
		if seen[s] {
			return nil, fmt.Sprintf("item %d: %q is chosen twice", i, s)
		}
		seen[s] = true
	}
	if p.MinItems != nil && len(items) < *p.MinItems {
		return nil, fmt.Sprintf("must have at least %d items, has %d", *p.MinItems, len(items))
	}
	if p.MaxItems != nil && len(items) > *p.MaxItems {
		return nil, fmt.Sprintf("must have at most %d items, has %d", *p.MaxItems, len(items))
	}
	return items, ""
}
