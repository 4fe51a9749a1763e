package question_test

import (
	"reflect"
	"testing"

	"github.com/acpmux/acpmux/confirm/question"
)

// FuzzValidate: Compile and Validate never panic; an accepted answer
// validates again to the same value; its Response decodes and validates to
// the same value again, so what the agent reads is what was checked.
func FuzzValidate(f *testing.F) {
	for _, tt := range validateTests {
		f.Add(formSchema, []byte(tt.answer))
	}
	f.Add(`{"properties":{"a":{"type":"string","pattern":"^a+$","maxLength":3}}}`, []byte(`{"action":"accept","content":{"a":"aa"}}`))
	f.Add(`{"properties":{"n":{"type":"number"}}}`, []byte(`{"action":"accept","content":{"n":-0}}`))
	f.Add(`{"properties":{"n":{"type":"integer"}}}`, []byte(`{"action":"accept","content":{"n":1E+2}}`))
	f.Add(``, []byte(`{"action":"accept"}`)) // "" selects the URL question
	url := mustNew(f, urlParams)
	f.Fuzz(func(t *testing.T, schema string, body []byte) {
		q := url
		if schema != "" {
			s, err := question.Compile([]byte(schema))
			if err != nil {
				return
			}
			q = &question.Question{Params: question.Params{Mode: question.ModeForm}, Schema: s}
			q.View()
		}
		a, err := question.DecodeAnswer(body)
		if err != nil {
			return
		}
		got, err := q.Validate(a)
		if err != nil {
			return
		}
		again, err := q.Validate(got)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("validated answer %#v re-validates to %#v, %v", got, again, err)
		}
		resp := question.Response(got)
		back, err := question.DecodeAnswer(resp)
		if err != nil {
			t.Fatalf("Response %s does not decode: %v", resp, err)
		}
		back, err = q.Validate(back)
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("Response %s reads back as %#v, %v; want %#v", resp, back, err, got)
		}
	})
}
