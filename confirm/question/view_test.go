package question_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/acpmux/acpmux/confirm/question"
)

func TestViewOptionsForOneEnum(t *testing.T) {
	v := mustNew(t, formParams(`{"properties":{"plan":{"type":"string","oneOf":[{"const":"a","title":"Plan A"},{"const":"b","title":"Plan B"}]}},"required":["plan"]}`)).View()
	want := []question.Option{{OptionID: "a", Name: "Plan A"}, {OptionID: "b", Name: "Plan B"}}
	if v.Kind != "question" || v.Prompt != "Tell me" || v.Field != "plan" || v.AllowFreeText || !reflect.DeepEqual(v.Options, want) {
		t.Errorf("view = %+v", v)
	}
	v = mustNew(t, formParams(`{"properties":{"c":{"type":"string","enum":["red","green"]}}}`)).View()
	if len(v.Options) != 2 || v.Options[0] != (question.Option{OptionID: "red", Name: "red"}) {
		t.Errorf("enum options = %+v", v.Options)
	}
}

func TestViewAllowFreeTextForOneString(t *testing.T) {
	for schema, want := range map[string]bool{
		`{"properties":{"why":{"type":"string","maxLength":200}}}`:         true,
		`{"properties":{"mail":{"type":"string","format":"email"}}}`:       false,
		`{"properties":{"why":{"type":"string"},"ok":{"type":"boolean"}}}`: false,
		`{"properties":{"n":{"type":"integer"}}}`:                          false,
		`{"properties":{"c":{"type":"string","enum":["x"]}}}`:              false,
	} {
		v := mustNew(t, formParams(schema)).View()
		if v.AllowFreeText != want {
			t.Errorf("%s: allowFreeText = %v, want %v", schema, v.AllowFreeText, want)
		}
		if want && v.Field != "why" {
			t.Errorf("%s: field = %q, want why", schema, v.Field)
		}
	}
}

func TestViewJSONShape(t *testing.T) {
	schema := `{"properties":{"why":{"type":"string"}}}`
	v := mustNew(t, formParams(schema)).View()
	v.ID = "d1"
	b, _ := json.Marshal(v)
	var got map[string]any
	json.Unmarshal(b, &got)
	for _, k := range []string{"id", "sessionId", "kind", "mode", "prompt", "requestedSchema", "field", "options", "allowFreeText", "status", "answer", "createdAt", "deadline"} {
		if _, ok := got[k]; !ok {
			t.Errorf("view JSON %s has no %q", b, k)
		}
	}
	if rs, _ := json.Marshal(got["requestedSchema"]); string(rs) != schema {
		t.Errorf("requestedSchema = %s, want the agent's %s", rs, schema)
	}
	u := mustNew(t, urlParams).View()
	if u.Mode != question.ModeURL || u.URL != "https://example.com/auth?x=1" || u.ElicitationID != "el_1" || u.RequestedSchema != nil {
		t.Errorf("url view = %+v", u)
	}
}

func TestParseFieldsTypesBySchema(t *testing.T) {
	s, err := question.Compile([]byte(formSchema))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ParseFields([]string{"name=Ann=B", "ratio=0.5", "count=3", "ok=true", "tags=a,c", "picks="})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "Ann=B", "ratio": 0.5, "count": int64(3), "ok": true, "tags": []string{"a", "c"}, "picks": []string{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	q := &question.Question{Params: question.Params{Mode: question.ModeForm}, Schema: s}
	if _, err := q.Validate(question.Answer{Action: question.Accept, Content: got}); err != nil {
		t.Errorf("parsed fields do not validate: %v", err)
	}
	for field, wantField := range map[string]string{
		"nameAnn":   "",
		"age=3":     "content.age",
		"count=2.5": "content.count",
		"ratio=x":   "content.ratio",
		"ratio=NaN": "content.ratio",
		"ok=yes":    "content.ok",
	} {
		_, err := s.ParseFields([]string{field})
		var fe *question.FieldError
		if !errors.As(err, &fe) || fe.Field != wantField {
			t.Errorf("ParseFields(%q) = %v, want a FieldError on %q", field, err, wantField)
		}
	}
	if _, err := s.ParseFields([]string{"name=Ann", "name=Bob"}); err == nil {
		t.Error("a field given twice was accepted")
	}
}
