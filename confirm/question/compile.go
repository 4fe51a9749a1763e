package question

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/acpmux/acpmux/acp"
)

// The keywords Compile understands; any other member is refused. "$schema"
// and "additionalProperties": false are accepted at the top because
// generators (zod's JSON Schema output, MCP servers) add them; a multi
// select may say "uniqueItems": true, which it always is; "enumNames" is
// the titles of an enum in older MCP schemas.
var (
	topKeywords    = []string{"type", "title", "description", "properties", "required", "_meta", "$schema", "additionalProperties"}
	commonKeywords = []string{"type", "title", "description", "default", "_meta"}
	typeKeywords   = map[Type][]string{
		TypeString:  {"minLength", "maxLength", "pattern", "format", "enum", "oneOf", "enumNames"},
		TypeNumber:  {"minimum", "maximum"},
		TypeInteger: {"minimum", "maximum"},
		TypeBoolean: {},
		TypeArray:   {"minItems", "maxItems", "items", "uniqueItems"},
	}
	itemsKeywords  = []string{"type", "enum", "anyOf", "_meta"}
	optionKeywords = []string{"const", "title", "description", "_meta"}
)

// Compile compiles a requested schema (ACP schema ElicitationSchema, the
// requestedSchema of a form-mode elicitation/create). The subset: an object
// (type "object" or absent) with title, description, required (names of
// its properties) and properties of type string (minLength, maxLength,
// pattern, format email/uri/date/date-time, enum or oneOf of
// {const,title}), number and integer (minimum, maximum), boolean, and array
// (a multi select: items {type:"string",enum} or {anyOf:[{const,title}]},
// minItems, maxItems); each with title, description and default. A null
// member counts as absent.
//
// Anything else returns an error wrapping [ErrUnsupported] that names the
// property: another type or keyword, a duplicate or case-variant member
// name anywhere in the schema, two property names that differ only in
// case, an empty or repeated enum, a limit of the wrong type, a lower limit
// above its upper limit, a pattern that does not compile as RE2 (Go's
// regexp; JSON Schema patterns are ECMA-262, and most are both).
func Compile(raw json.RawMessage) (*Schema, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: requestedSchema is not valid JSON", ErrUnsupported)
	}
	if k := acp.DuplicateKey(raw); k != "" {
		return nil, fmt.Errorf("%w: requestedSchema has the member %q twice", ErrUnsupported, k)
	}
	m, err := object(raw, topKeywords)
	if err != nil {
		return nil, unsupported("", err.Error())
	}
	s := &Schema{Raw: append(json.RawMessage(nil), raw...), byName: map[string]int{}}
	if err := s.top(m); err != nil {
		return nil, err
	}
	if err := s.properties(m["properties"]); err != nil {
		return nil, err
	}
	return s, s.required(m["required"])
}

// unsupported returns ErrUnsupported with the property name and reason.
func unsupported(prop, reason string) error {
	if prop == "" {
		return fmt.Errorf("%w: requestedSchema: %s", ErrUnsupported, reason)
	}
	return fmt.Errorf("%w: requestedSchema property %q: %s", ErrUnsupported, prop, reason)
}

// top reads the schema's own keywords.
func (s *Schema) top(m map[string]json.RawMessage) error {
	if t, err := str(m, "type"); err != nil || (t != "" && t != "object") {
		return unsupported("", `type must be "object"`)
	}
	if raw, ok := present(m, "additionalProperties"); ok && string(raw) != "false" {
		return unsupported("", "additionalProperties must be false")
	}
	if _, err := str(m, "$schema"); err != nil {
		return unsupported("", err.Error())
	}
	var err error
	if s.Title, err = str(m, "title"); err != nil {
		return unsupported("", err.Error())
	}
	if s.Description, err = str(m, "description"); err != nil {
		return unsupported("", err.Error())
	}
	return nil
}

// properties compiles the properties object in its order.
func (s *Schema) properties(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	m, err := object(raw, nil)
	if err != nil {
		return unsupported("", "properties: "+err.Error())
	}
	for _, name := range orderedKeys(raw) {
		for _, p := range s.Properties {
			if strings.EqualFold(p.Name, name) {
				return unsupported(name, fmt.Sprintf("differs from property %q only in case", p.Name))
			}
		}
		p, err := compileProperty(name, m[name])
		if err != nil {
			return err
		}
		s.byName[name] = len(s.Properties)
		s.Properties = append(s.Properties, p)
	}
	return nil
}

// required marks the required properties.
func (s *Schema) required(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var names []string
	if raw[0] != '[' || json.Unmarshal(raw, &names) != nil || hasNull(raw) {
		return unsupported("", "required must be an array of property names")
	}
	for _, n := range names {
		i, ok := s.byName[n]
		if !ok {
			return unsupported(n, "is required but not a property")
		}
		if s.Properties[i].Required {
			return unsupported(n, "is listed twice in required")
		}
		s.Properties[i].Required = true
	}
	return nil
}

// hasNull reports whether the JSON array raw has a null member.
func hasNull(raw json.RawMessage) bool {
	var vs []json.RawMessage
	json.Unmarshal(raw, &vs)
	for _, v := range vs {
		if string(v) == "null" {
			return true
		}
	}
	return false
}

// compileProperty compiles one property schema.
func compileProperty(name string, raw json.RawMessage) (Property, error) {
	p := Property{Name: name}
	head, err := object(raw, nil)
	if err != nil {
		return p, unsupported(name, err.Error())
	}
	t, err := str(head, "type")
	p.Type = Type(t)
	kw, known := typeKeywords[p.Type]
	if err != nil || !known {
		return p, unsupported(name, fmt.Sprintf("type %q is not one of string, number, integer, boolean, array", t))
	}
	m, err := object(raw, append(append([]string(nil), commonKeywords...), kw...))
	if err != nil {
		return p, unsupported(name, err.Error())
	}
	if p.Title, err = str(m, "title"); err == nil {
		p.Description, err = str(m, "description")
	}
	if err == nil {
		err = p.limits(m)
	}
	if err != nil {
		return p, unsupported(name, err.Error())
	}
	if raw, ok := present(m, "default"); ok {
		if _, reason := p.check(decodeValue(raw)); reason == "" {
			p.Default = raw
		}
	}
	return p, nil
}

// limits reads the keywords of p's type.
func (p *Property) limits(m map[string]json.RawMessage) error {
	switch p.Type {
	case TypeString:
		return p.stringLimits(m)
	case TypeNumber, TypeInteger:
		return p.numberLimits(m)
	case TypeArray:
		return p.arrayLimits(m)
	}
	return nil
}

func (p *Property) stringLimits(m map[string]json.RawMessage) error {
	var err error
	if p.MinLength, p.MaxLength, err = countPair(m, "minLength", "maxLength"); err != nil {
		return err
	}
	if p.Pattern, err = str(m, "pattern"); err != nil {
		return err
	}
	if p.Pattern != "" {
		if p.pattern, err = regexp.Compile(p.Pattern); err != nil {
			return fmt.Errorf("pattern %q is not RE2 syntax", p.Pattern)
		}
	}
	f, err := str(m, "format")
	switch p.Format = Format(f); {
	case err != nil:
		return err
	case f != "" && p.Format != FormatEmail && p.Format != FormatURI && p.Format != FormatDate && p.Format != FormatDateTime:
		return fmt.Errorf("format %q is not one of email, uri, date, date-time", f)
	}
	return p.singleSelect(m)
}

// singleSelect reads enum (with enumNames) or oneOf.
func (p *Property) singleSelect(m map[string]json.RawMessage) error {
	enum, hasEnum := present(m, "enum")
	oneOf, hasOneOf := present(m, "oneOf")
	names, hasNames := present(m, "enumNames")
	switch {
	case hasEnum && hasOneOf:
		return fmt.Errorf("both enum and oneOf")
	case hasNames && !hasEnum:
		return fmt.Errorf("enumNames without enum")
	case hasEnum:
		var err error
		if p.Enum, err = plainEnum(enum, "enum"); err != nil || !hasNames {
			return err
		}
		var titles []string
		if json.Unmarshal(names, &titles) != nil || len(titles) != len(p.Enum) || hasNull(names) {
			return fmt.Errorf("enumNames must be %d strings, one per enum member", len(p.Enum))
		}
		for i := range p.Enum {
			p.Enum[i].Title = titles[i]
		}
	case hasOneOf:
		var err error
		p.Enum, err = titledEnum(oneOf, "oneOf")
		return err
	}
	return nil
}

func (p *Property) numberLimits(m map[string]json.RawMessage) error {
	var err error
	if p.Minimum, err = number(m, "minimum"); err != nil {
		return err
	}
	if p.Maximum, err = number(m, "maximum"); err != nil {
		return err
	}
	if p.Minimum != nil && p.Maximum != nil && *p.Minimum > *p.Maximum {
		return fmt.Errorf("minimum %v above maximum %v", *p.Minimum, *p.Maximum)
	}
	return nil
}

func (p *Property) arrayLimits(m map[string]json.RawMessage) error {
	var err error
	if p.MinItems, p.MaxItems, err = countPair(m, "minItems", "maxItems"); err != nil {
		return err
	}
	if raw, ok := present(m, "uniqueItems"); ok && string(raw) != "true" {
		return fmt.Errorf("uniqueItems must be true")
	}
	raw, ok := present(m, "items")
	if !ok {
		return fmt.Errorf("items is required")
	}
	im, err := object(raw, itemsKeywords)
	if err != nil {
		return fmt.Errorf("items: %v", err)
	}
	t, err := str(im, "type")
	enum, hasEnum := present(im, "enum")
	anyOf, hasAnyOf := present(im, "anyOf")
	switch {
	case err != nil || (t != "" && t != "string"):
		return fmt.Errorf(`items type must be "string"`)
	case hasEnum == hasAnyOf:
		return fmt.Errorf("items must have exactly one of enum and anyOf")
	case hasEnum && t == "":
		return fmt.Errorf(`items with enum must have type "string"`)
	case hasEnum:
		p.Enum, err = plainEnum(enum, "items enum")
	default:
		p.Enum, err = titledEnum(anyOf, "items anyOf")
	}
	return err
}

// plainEnum reads an array of distinct strings.
func plainEnum(raw json.RawMessage, what string) ([]EnumOption, error) {
	var vs []string
	if raw[0] != '[' || json.Unmarshal(raw, &vs) != nil || hasNull(raw) {
		return nil, fmt.Errorf("%s must be an array of strings", what)
	}
	out := make([]EnumOption, len(vs))
	for i, v := range vs {
		out[i] = EnumOption{Const: v}
	}
	return out, distinct(out, what)
}

// titledEnum reads an array of {const, title, description?}.
func titledEnum(raw json.RawMessage, what string) ([]EnumOption, error) {
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, fmt.Errorf("%s must be an array of {const, title}", what)
	}
	out := make([]EnumOption, len(items))
	for i, it := range items {
		m, err := object(it, optionKeywords)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %v", what, i, err)
		}
		if out[i].Const, err = acp.DecodeString(m["const"], "const"); err != nil {
			return nil, fmt.Errorf("%s[%d]: const must be a string", what, i)
		}
		if out[i].Title, err = acp.DecodeString(m["title"], "title"); err != nil {
			return nil, fmt.Errorf("%s[%d]: title must be a string", what, i)
		}
		if out[i].Description, err = str(m, "description"); err != nil {
			return nil, fmt.Errorf("%s[%d]: %v", what, i, err)
		}
	}
	return out, distinct(out, what)
}

// distinct refuses an empty or repeated enum.
func distinct(opts []EnumOption, what string) error {
	if len(opts) == 0 {
		return fmt.Errorf("%s is empty", what)
	}
	seen := map[string]bool{}
	for _, o := range opts {
		if seen[o.Const] {
			return fmt.Errorf("%s has %q twice", what, o.Const)
		}
		seen[o.Const] = true
	}
	return nil
}

// object decodes raw as one JSON object with DecodeObject's rules (closed
// when known is non-nil); the error text drops the -32602 prefix, since a
// schema problem is ErrUnsupported, not invalid params.
func object(raw json.RawMessage, known []string) (map[string]json.RawMessage, error) {
	m, err := acp.DecodeObject(raw, known, known != nil)
	if err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), acp.ErrInvalidParams.Error()+": "))
	}
	return m, nil
}

// orderedKeys returns the member names of the valid JSON object raw in order.
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token() // '{'
	var keys []string
	for dec.More() {
		tok, _ := dec.Token()
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	return keys
}

// str reads an optional string member ("" when absent or null).
func str(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := present(m, name)
	if !ok {
		return "", nil
	}
	s, err := acp.DecodeString(raw, name)
	if err != nil {
		return "", fmt.Errorf("%s must be a string", name)
	}
	return s, nil
}

// number reads an optional finite number member.
func number(m map[string]json.RawMessage, name string) (*float64, error) {
	raw, ok := present(m, name)
	if !ok {
		return nil, nil
	}
	var f float64
	if raw[0] == '"' || json.Unmarshal(raw, &f) != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%s must be a finite number", name)
	}
	return &f, nil
}

// countPair reads an optional lower and upper count (non-negative integers
// up to 2^32-1, as the SDK's uint32) and refuses lower above upper.
func countPair(m map[string]json.RawMessage, lo, hi string) (*int, *int, error) {
	a, err := count(m, lo)
	if err != nil {
		return nil, nil, err
	}
	b, err := count(m, hi)
	if err != nil {
		return nil, nil, err
	}
	if a != nil && b != nil && *a > *b {
		return nil, nil, fmt.Errorf("%s %d above %s %d", lo, *a, hi, *b)
	}
	return a, b, nil
}

func count(m map[string]json.RawMessage, name string) (*int, error) {
	f, err := number(m, name)
	if err != nil || f == nil {
		return nil, err
	}
	if *f < 0 || *f > math.MaxUint32 || *f != math.Trunc(*f) {
		return nil, fmt.Errorf("%s must be a whole number from 0 to 4294967295", name)
	}
	n := int(*f)
	return &n, nil
}
