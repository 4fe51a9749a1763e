package question_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/question"
)

func TestCompileSchemaSubset(t *testing.T) {
	s, err := question.Compile([]byte(formSchema))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range s.Properties {
		names = append(names, p.Name)
	}
	if got, want := strings.Join(names, ","), "name,email,site,day,at,code,color,size,ratio,count,big,ok,tags,picks"; got != want {
		t.Errorf("properties in order %s, want %s", got, want)
	}
	name, _ := s.Property("name")
	if !name.Required || name.Title != "Name" || *name.MinLength != 2 || *name.MaxLength != 5 {
		t.Errorf("name = %+v", name)
	}
	size, _ := s.Property("size")
	if len(size.Enum) != 2 || size.Enum[1] != (question.EnumOption{Const: "l", Title: "Large"}) {
		t.Errorf("size enum = %+v", size.Enum)
	}
	// Accepted extras: generators' $schema and additionalProperties:false,
	// null for absent, enumNames, uniqueItems:true, an empty object.
	for _, ok := range []string{
		`{}`,
		`{"type":"object","properties":{}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`,
		`{"type":"object","title":null,"required":null,"properties":{"a":{"type":"string","minLength":null,"format":null}}}`,
		`{"properties":{"a":{"type":"string","enum":["x","y"],"enumNames":["X","Y"]}}}`,
		`{"properties":{"a":{"type":"array","uniqueItems":true,"items":{"type":"string","anyOf":[{"const":"x","title":"X"}]}}}}`,
		`{"properties":{"a":{"type":"number","minimum":-1.5,"maximum":-1.5,"default":-1.5,"_meta":{"k":1}}}}`,
	} {
		if _, err := question.Compile([]byte(ok)); err != nil {
			t.Errorf("Compile(%s): %v", ok, err)
		}
	}
}

// TestCompileRefusesOutsideSubset: every refusal wraps ErrUnsupported (the
// broker declines the question) and names the property.
func TestCompileRefusesOutsideSubset(t *testing.T) {
	for _, tt := range []struct{ name, schema, mention string }{
		{"not an object type", `{"type":"array"}`, "type"},
		{"not JSON", `{"type":`, "JSON"},
		{"unknown top keyword", `{"type":"object","oneOf":[]}`, "oneOf"},
		{"additionalProperties true", `{"additionalProperties":true}`, "additionalProperties"},
		{"duplicate member", `{"properties":{"a":{"type":"string","type":"number"}}}`, `"type"`},
		{"case-variant property names", `{"properties":{"a":{"type":"string"},"A":{"type":"string"}}}`, `"A"`},
		{"nested object", `{"properties":{"a":{"type":"object","properties":{}}}}`, `"a"`},
		{"custom type", `{"properties":{"a":{"type":"_color"}}}`, `"a"`},
		{"no type", `{"properties":{"a":{"title":"A"}}}`, `"a"`},
		{"unknown keyword", `{"properties":{"a":{"type":"number","exclusiveMinimum":0}}}`, "exclusiveMinimum"},
		{"string keyword on number", `{"properties":{"a":{"type":"number","minLength":1}}}`, "minLength"},
		{"minLength as string", `{"properties":{"a":{"type":"string","minLength":"1"}}}`, "minLength"},
		{"negative maxLength", `{"properties":{"a":{"type":"string","maxLength":-1}}}`, "maxLength"},
		{"fractional minItems", `{"properties":{"a":{"type":"array","minItems":1.5,"items":{"type":"string","enum":["x"]}}}}`, "minItems"},
		{"minLength above maxLength", `{"properties":{"a":{"type":"string","minLength":3,"maxLength":2}}}`, "minLength"},
		{"minimum above maximum", `{"properties":{"a":{"type":"integer","minimum":3,"maximum":2}}}`, "minimum"},
		{"minItems above maxItems", `{"properties":{"a":{"type":"array","minItems":3,"maxItems":2,"items":{"type":"string","enum":["x"]}}}}`, "minItems"},
		{"unknown format", `{"properties":{"a":{"type":"string","format":"ipv4"}}}`, "ipv4"},
		{"pattern not RE2", `{"properties":{"a":{"type":"string","pattern":"(?=x)"}}}`, "RE2"},
		{"empty enum", `{"properties":{"a":{"type":"string","enum":[]}}}`, "empty"},
		{"repeated enum", `{"properties":{"a":{"type":"string","enum":["x","x"]}}}`, "twice"},
		{"enum of numbers", `{"properties":{"a":{"type":"string","enum":[1,2]}}}`, "enum"},
		{"enum and oneOf", `{"properties":{"a":{"type":"string","enum":["x"],"oneOf":[{"const":"x","title":"X"}]}}}`, "oneOf"},
		{"oneOf without title", `{"properties":{"a":{"type":"string","oneOf":[{"const":"x"}]}}}`, "title"},
		{"enumNames length", `{"properties":{"a":{"type":"string","enum":["x","y"],"enumNames":["X"]}}}`, "enumNames"},
		{"array without items", `{"properties":{"a":{"type":"array"}}}`, "items"},
		{"array of numbers", `{"properties":{"a":{"type":"array","items":{"type":"number"}}}}`, "items"},
		{"array items without enum", `{"properties":{"a":{"type":"array","items":{"type":"string"}}}}`, "enum"},
		{"array items enum without type", `{"properties":{"a":{"type":"array","items":{"enum":["x"]}}}}`, "type"},
		{"uniqueItems false", `{"properties":{"a":{"type":"array","uniqueItems":false,"items":{"type":"string","enum":["x"]}}}}`, "uniqueItems"},
		{"required not a property", `{"properties":{"a":{"type":"string"}},"required":["b"]}`, `"b"`},
		{"required twice", `{"properties":{"a":{"type":"string"}},"required":["a","a"]}`, "twice"},
		{"required not strings", `{"properties":{"a":{"type":"string"}},"required":[null]}`, "required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := question.Compile([]byte(tt.schema))
			if !errors.Is(err, question.ErrUnsupported) {
				t.Fatalf("Compile(%s) = %v, want ErrUnsupported", tt.schema, err)
			}
			if errors.Is(err, acp.ErrInvalidParams) {
				t.Errorf("%v also wraps ErrInvalidParams", err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %s", err, tt.mention)
			}
		})
	}
}

func TestCompileDropsInvalidDefault(t *testing.T) {
	s, err := question.Compile([]byte(`{"properties":{"a":{"type":"integer","default":2.5},"b":{"type":"string","enum":["x"],"default":"x"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := s.Property("a"); a.Default != nil {
		t.Errorf("a.Default = %s, want nil", a.Default)
	}
	if b, _ := s.Property("b"); string(b.Default) != `"x"` {
		t.Errorf("b.Default = %s, want \"x\"", b.Default)
	}
}
