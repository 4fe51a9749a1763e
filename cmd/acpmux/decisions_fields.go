package main

import (
	"strconv"
	"strings"

	"github.com/acpmux/acpmux/confirm/question"
)

// fieldLimits describes what an answer to property p may hold, for
// decisions show: its enum values (each const as --field takes it, with
// its title when that differs), length, pattern, format, range, item count
// and default, each after "; ". Agent text goes through safe. It is "" when
// the property has none of them.
func fieldLimits(p question.Property) string {
	var parts []string
	add := func(s string) { parts = append(parts, s) }
	if p.Enum != nil {
		vals := make([]string, len(p.Enum))
		for i, o := range p.Enum {
			vals[i] = safe(o.Const)
			if o.Title != "" && o.Title != o.Const {
				vals[i] += " (" + safe(o.Title) + ")"
			}
		}
		what := "one of: "
		if p.Type == question.TypeArray {
			what = "any of (comma-separated): "
		}
		add(what + strings.Join(vals, ", "))
	}
	if r := intRange(p.MinLength, p.MaxLength, "characters"); r != "" {
		add(r)
	}
	if p.Pattern != "" {
		add("pattern " + safe(p.Pattern))
	}
	if p.Format != "" {
		add("format " + string(p.Format))
	}
	if p.Minimum != nil {
		add("at least " + strconv.FormatFloat(*p.Minimum, 'g', -1, 64))
	}
	if p.Maximum != nil {
		add("at most " + strconv.FormatFloat(*p.Maximum, 'g', -1, 64))
	}
	if r := intRange(p.MinItems, p.MaxItems, "items"); r != "" {
		add(r)
	}
	if len(p.Default) > 0 {
		add("default " + safe(string(p.Default)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// intRange says "2 to 5 UNIT", "at least 2 UNIT" or "at most 5 UNIT", or ""
// when both limits are absent.
func intRange(min, max *int, unit string) string {
	switch {
	case min != nil && max != nil:
		return strconv.Itoa(*min) + " to " + strconv.Itoa(*max) + " " + unit
	case min != nil:
		return "at least " + strconv.Itoa(*min) + " " + unit
	case max != nil:
		return "at most " + strconv.Itoa(*max) + " " + unit
	}
	return ""
}
