package question_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/question"
)

// formSchema has a property of every type and every limit.
const formSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name","minLength":2,"maxLength":5},
	"email":{"type":"string","format":"email"},
	"site":{"type":"string","format":"uri"},
	"day":{"type":"string","format":"date"},
	"at":{"type":"string","format":"date-time"},
	"code":{"type":"string","pattern":"^[A-Z]{3}$"},
	"color":{"type":"string","enum":["red","green"]},
	"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
	"ratio":{"type":"number","minimum":0,"maximum":1},
	"count":{"type":"integer","minimum":1,"maximum":10},
	"big":{"type":"integer"},
	"ok":{"type":"boolean"},
	"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":1,"maxItems":2},
	"picks":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"},{"const":"y","title":"Y"}]}}
},"required":["name"]}`

func formParams(schema string) string {
	return `{"sessionId":"sess_1","message":"Tell me","mode":"form","requestedSchema":` + schema + `}`
}

const urlParams = `{"sessionId":"sess_1","message":"Sign in","mode":"url","url":"https://example.com/auth?x=1","elicitationId":"el_1"}`

func mustNew(t testing.TB, params string) *question.Question {
	t.Helper()
	q, err := question.New([]byte(params))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return q
}

// validateTests is shared by TestValidateAnswer and the fuzz seed corpus.
// field is the FieldError's Field, or "" when the answer is accepted;
// response is then the result the agent receives.
var validateTests = []struct {
	name, answer, field, response string
}{
	{"minimal accept", `{"action":"accept","content":{"name":"Ann"}}`, "", `{"action":"accept","content":{"name":"Ann"}}`},
	{"every property", `{"action":"accept","content":{"name":"Ann","email":"ann@example.com","site":"https://example.com/a","day":"2026-07-01","at":"2026-07-01T12:00:00Z","code":"ABC","color":"red","size":"l","ratio":0.5,"count":10,"big":-9007199254740992,"ok":false,"tags":["a","c"],"picks":[]}}`, "",
		`{"action":"accept","content":{"at":"2026-07-01T12:00:00Z","big":-9007199254740992,"code":"ABC","color":"red","count":10,"day":"2026-07-01","email":"ann@example.com","name":"Ann","ok":false,"picks":[],"ratio":0.5,"site":"https://example.com/a","size":"l","tags":["a","c"]}}`},
	{"_meta dropped", `{"action":"accept","content":{"name":"Ann"},"_meta":{"x":1}}`, "", `{"action":"accept","content":{"name":"Ann"}}`},
	{"integer written 5.0", `{"action":"accept","content":{"name":"Ann","count":5.0}}`, "", `{"action":"accept","content":{"count":5,"name":"Ann"}}`},
	{"integer written 1e1", `{"action":"accept","content":{"name":"Ann","count":1e1}}`, "", `{"action":"accept","content":{"count":10,"name":"Ann"}}`},
	{"length in code points", `{"action":"accept","content":{"name":"日本語🙂!"}}`, "", `{"action":"accept","content":{"name":"日本語🙂!"}}`},
	{"number bounds inclusive", `{"action":"accept","content":{"name":"Ann","ratio":1}}`, "", `{"action":"accept","content":{"name":"Ann","ratio":1}}`},
	{"decline", `{"action":"decline"}`, "", `{"action":"decline"}`},
	{"cancel", `{"action":"cancel"}`, "", `{"action":"cancel"}`},
	{"decline with null content", `{"action":"decline","content":null}`, "", `{"action":"decline"}`},

	{"action missing", `{"content":{"name":"Ann"}}`, "action", ""},
	{"action unknown", `{"action":"approve"}`, "action", ""},
	{"action wrong case", `{"action":"Accept","content":{"name":"Ann"}}`, "action", ""},
	{"action not a string", `{"action":1}`, "action", ""},
	{"unknown body member", `{"action":"decline","text":"no"}`, "", ""},
	{"duplicate action", `{"action":"decline","action":"accept"}`, "", ""},
	{"case-variant member", `{"action":"decline","Action":"accept"}`, "", ""},
	{"content not an object", `{"action":"accept","content":["Ann"]}`, "content", ""},
	{"duplicate content member", `{"action":"accept","content":{"name":"Ann","name":"Bob"}}`, "content", ""},
	{"decline with content", `{"action":"decline","content":{}}`, "content", ""},
	{"cancel with content", `{"action":"cancel","content":{"name":"Ann"}}`, "content", ""},

	{"unknown property", `{"action":"accept","content":{"name":"Ann","age":3}}`, "content.age", ""},
	{"case-variant property", `{"action":"accept","content":{"Name":"Ann"}}`, "content.Name", ""},
	{"required missing", `{"action":"accept","content":{"ok":true}}`, "content.name", ""},
	{"required missing, no content", `{"action":"accept"}`, "content.name", ""},
	{"null value", `{"action":"accept","content":{"name":null}}`, "content.name", ""},
	{"string as number", `{"action":"accept","content":{"name":5}}`, "content.name", ""},
	{"too short", `{"action":"accept","content":{"name":"A"}}`, "content.name", ""},
	{"too long", `{"action":"accept","content":{"name":"Annabel"}}`, "content.name", ""},
	{"bad email", `{"action":"accept","content":{"name":"Ann","email":"ann"}}`, "content.email", ""},
	{"email with display name", `{"action":"accept","content":{"name":"Ann","email":"Ann <ann@example.com>"}}`, "content.email", ""},
	{"relative uri", `{"action":"accept","content":{"name":"Ann","site":"/a/b"}}`, "content.site", ""},
	{"uri with space", `{"action":"accept","content":{"name":"Ann","site":"https://example.com/a b"}}`, "content.site", ""},
	{"bad date", `{"action":"accept","content":{"name":"Ann","day":"2026-02-30"}}`, "content.day", ""},
	{"bad date-time", `{"action":"accept","content":{"name":"Ann","at":"2026-07-01 12:00"}}`, "content.at", ""},
	{"pattern mismatch", `{"action":"accept","content":{"name":"Ann","code":"abc"}}`, "content.code", ""},
	{"not in enum", `{"action":"accept","content":{"name":"Ann","color":"blue"}}`, "content.color", ""},
	{"enum wrong case", `{"action":"accept","content":{"name":"Ann","color":"Red"}}`, "content.color", ""},
	{"oneOf title instead of const", `{"action":"accept","content":{"name":"Ann","size":"Large"}}`, "content.size", ""},
	{"number as string", `{"action":"accept","content":{"name":"Ann","ratio":"0.5"}}`, "content.ratio", ""},
	{"number below minimum", `{"action":"accept","content":{"name":"Ann","ratio":-0.1}}`, "content.ratio", ""},
	{"number above maximum", `{"action":"accept","content":{"name":"Ann","ratio":1.5}}`, "content.ratio", ""},
	{"number out of float range", `{"action":"accept","content":{"name":"Ann","ratio":1e400}}`, "content.ratio", ""},
	{"integer with fraction", `{"action":"accept","content":{"name":"Ann","count":2.5}}`, "content.count", ""},
	{"integer as string", `{"action":"accept","content":{"name":"Ann","count":"5"}}`, "content.count", ""},
	{"integer above maximum", `{"action":"accept","content":{"name":"Ann","count":11}}`, "content.count", ""},
	{"integer beyond 2^53", `{"action":"accept","content":{"name":"Ann","big":9007199254740993}}`, "content.big", ""},
	{"integer huge exponent", `{"action":"accept","content":{"name":"Ann","big":1e999999999}}`, "content.big", ""},
	{"boolean as string", `{"action":"accept","content":{"name":"Ann","ok":"true"}}`, "content.ok", ""},
	{"boolean as number", `{"action":"accept","content":{"name":"Ann","ok":1}}`, "content.ok", ""},
	{"array as string", `{"action":"accept","content":{"name":"Ann","tags":"a"}}`, "content.tags", ""},
	{"array too few", `{"action":"accept","content":{"name":"Ann","tags":[]}}`, "content.tags", ""},
	{"array too many", `{"action":"accept","content":{"name":"Ann","tags":["a","b","c"]}}`, "content.tags", ""},
	{"array duplicate", `{"action":"accept","content":{"name":"Ann","tags":["a","a"]}}`, "content.tags", ""},
	{"array non-member", `{"action":"accept","content":{"name":"Ann","tags":["d"]}}`, "content.tags", ""},
	{"array non-string item", `{"action":"accept","content":{"name":"Ann","picks":[1]}}`, "content.picks", ""},
	{"anyOf title instead of const", `{"action":"accept","content":{"name":"Ann","picks":["X"]}}`, "content.picks", ""},
	{"object value", `{"action":"accept","content":{"name":{"first":"Ann"}}}`, "content.name", ""},
}

func TestValidateAnswer(t *testing.T) {
	q := mustNew(t, formParams(formSchema))
	for _, tt := range validateTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := validate(q, tt.answer)
			if tt.response == "" {
				var fe *question.FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("answer %s accepted (%s), want a FieldError on %q", tt.answer, question.Response(got), tt.field)
				}
				if fe.Field != tt.field {
					t.Errorf("Field = %q, want %q (%v)", fe.Field, tt.field, err)
				}
				if !errors.Is(err, acp.ErrInvalidParams) || acp.AsError(err).Code != -32602 {
					t.Errorf("error %v does not map to -32602", err)
				}
				if tt.field != "" && !strings.Contains(err.Error(), tt.field+": ") {
					t.Errorf("error %q does not name %q", err, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("answer %s refused: %v", tt.answer, err)
			}
			if resp := string(question.Response(got)); resp != tt.response {
				t.Errorf("Response = %s\nwant       %s", resp, tt.response)
			}
		})
	}
}

// validate decodes a host's answer body and validates it against q.
func validate(q *question.Question, body string) (question.Answer, error) {
	a, err := question.DecodeAnswer([]byte(body))
	if err != nil {
		return question.Answer{}, err
	}
	return q.Validate(a)
}

func TestURLModeAcceptCarriesNoContent(t *testing.T) {
	q := mustNew(t, urlParams)
	for body, want := range map[string]string{
		`{"action":"accept"}`:                     `{"action":"accept"}`,
		`{"action":"accept","content":null}`:      `{"action":"accept"}`,
		`{"action":"decline"}`:                    `{"action":"decline"}`,
		`{"action":"cancel"}`:                     `{"action":"cancel"}`,
		`{"action":"accept","content":{}}`:        "content",
		`{"action":"accept","content":{"a":"b"}}`: "content",
		`{"action":"open"}`:                       "action",
	} {
		got, err := validate(q, body)
		var fe *question.FieldError
		switch {
		case strings.HasPrefix(want, "{"):
			if err != nil || string(question.Response(got)) != want {
				t.Errorf("%s: got %s, %v; want %s", body, question.Response(got), err, want)
			}
		case !errors.As(err, &fe) || fe.Field != want:
			t.Errorf("%s: got %v, want a FieldError on %q", body, err, want)
		}
	}
}

func TestValidateGoValues(t *testing.T) {
	q := mustNew(t, formParams(formSchema))
	got, err := q.Validate(question.Answer{Action: question.Accept, Content: map[string]any{
		"name": "Ann", "ratio": 0.25, "count": int64(3), "ok": true, "tags": []string{"b"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "Ann", "ratio": 0.25, "count": int64(3), "ok": true, "tags": []string{"b"}}
	if !reflect.DeepEqual(got.Content, want) {
		t.Errorf("content = %#v, want %#v", got.Content, want)
	}
	for name, v := range map[string]any{"ratio": float64Inf(), "count": 2.5, "name": json.Number("5"), "big": json.Number("0x10")} {
		c := map[string]any{"name": "Ann", name: v}
		if _, err := q.Validate(question.Answer{Action: question.Accept, Content: c}); err == nil {
			t.Errorf("%s = %#v accepted", name, v)
		}
	}
}

func float64Inf() float64 { var zero float64; return 1 / zero }

func TestResponseRefusesUnvalidatedValues(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Response of a json.Number did not panic")
		}
	}()
	question.Response(question.Answer{Action: question.Accept, Content: map[string]any{"n": json.Number("1")}})
}
