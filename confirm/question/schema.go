package question

import (
	"encoding/json"
	"regexp"
)

// Type is the JSON Schema type of one property of a requested schema (ACP
// schema ElicitationPropertySchema, member type).
type Type string

// The property types of ACP v1 elicitation schemas.
const (
	TypeString  Type = "string"  // free text, or a single select with Enum
	TypeNumber  Type = "number"  // a finite JSON number
	TypeInteger Type = "integer" // a JSON number with no fractional part
	TypeBoolean Type = "boolean"
	TypeArray   Type = "array" // a multi select: distinct members of Enum
)

// Format is the format of a string property (ACP schema StringFormat).
type Format string

// The string formats of ACP v1 elicitation schemas.
const (
	FormatEmail    Format = "email"     // an address as net/mail parses it, without a display name
	FormatURI      Format = "uri"       // an absolute URI (it has a scheme)
	FormatDate     Format = "date"      // RFC 3339 full-date, 2006-01-02
	FormatDateTime Format = "date-time" // RFC 3339 date-time, 2006-01-02T15:04:05Z07:00
)

// EnumOption is one member of a single or multi select: Const is the value
// the answer carries, Title what a host shows (Const itself when the schema
// gave no title). ACP schema EnumOption.
type EnumOption struct {
	Const       string `json:"const"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Property is one compiled property of a requested schema. Which limits
// apply depends on Type: MinLength, MaxLength (in Unicode code points),
// Pattern and Format for strings; Minimum and Maximum (inclusive) for
// numbers and integers; MinItems and MaxItems for arrays; Enum for strings
// (a single select when non-nil) and arrays (the members to pick from, never
// nil). A nil limit is absent. Default is the schema's default when it
// satisfies the property, else nil (as the SDK drops an invalid default).
type Property struct {
	Name        string
	Type        Type
	Title       string
	Description string
	Required    bool
	Default     json.RawMessage

	MinLength, MaxLength *int
	Pattern              string
	Format               Format
	Enum                 []EnumOption
	Minimum, Maximum     *float64
	MinItems, MaxItems   *int

	pattern *regexp.Regexp // Pattern compiled (RE2 syntax), nil when absent
}

// Schema is a compiled requested schema (ACP schema ElicitationSchema): a
// flat object whose properties have primitive types. Properties keep the
// order of the schema's properties object, the order a form shows them.
// Raw is the schema as the agent sent it. A Schema is immutable and safe
// for concurrent use.
type Schema struct {
	Title       string
	Description string
	Properties  []Property
	Raw         json.RawMessage

	byName map[string]int // index into Properties
}

// Property returns the property called name (exact match).
func (s *Schema) Property(name string) (Property, bool) {
	i, ok := s.byName[name]
	if !ok {
		return Property{}, false
	}
	return s.Properties[i], true
}

// isEnum reports whether p is a select (single or multi).
func (p *Property) isEnum() bool { return p.Enum != nil }

// member reports whether v is one of p's Enum consts.
func (p *Property) member(v string) bool {
	for _, o := range p.Enum {
		if o.Const == v {
			return true
		}
	}
	return false
}
