package question_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/question"
)

func TestParseParams(t *testing.T) {
	p, err := question.ParseParams([]byte(`{"sessionId":"sess_1","toolCallId":"call_1","message":"Pick","mode":"form",
		"requestedSchema":{"properties":{}},"_meta":{"k":"v"},"future":1}`))
	if err != nil {
		t.Fatal(err)
	}
	want := question.Params{SessionID: "sess_1", ToolCallID: "call_1", Message: "Pick", Mode: question.ModeForm,
		RequestedSchema: json.RawMessage(`{"properties":{}}`), Meta: json.RawMessage(`{"k":"v"}`)}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	p, err = question.ParseParams([]byte(`{"requestId":7,"message":"Sign in","mode":"url","url":"https://example.com","elicitationId":"el_1"}`))
	if err != nil || string(p.RequestID) != "7" || p.ElicitationID != "el_1" || p.URL != "https://example.com" {
		t.Errorf("request-scoped url question: %+v, %v", p, err)
	}
}

func TestParseParamsRefusesMalformed(t *testing.T) {
	for name, params := range map[string]string{
		"not an object":        `[]`,
		"no message":           `{"sessionId":"s","mode":"form","requestedSchema":{}}`,
		"message null":         `{"sessionId":"s","message":null,"mode":"form","requestedSchema":{}}`,
		"no mode":              `{"sessionId":"s","message":"m","requestedSchema":{}}`,
		"no scope":             `{"message":"m","mode":"form","requestedSchema":{}}`,
		"requestId object":     `{"requestId":{},"message":"m","mode":"form","requestedSchema":{}}`,
		"sessionId number":     `{"sessionId":1,"message":"m","mode":"form","requestedSchema":{}}`,
		"form without schema":  `{"sessionId":"s","message":"m","mode":"form"}`,
		"schema not an object": `{"sessionId":"s","message":"m","mode":"form","requestedSchema":[]}`,
		"url without id":       `{"sessionId":"s","message":"m","mode":"url","url":"https://example.com"}`,
		"url relative":         `{"sessionId":"s","message":"m","mode":"url","url":"/auth","elicitationId":"e"}`,
		"duplicate mode":       `{"sessionId":"s","message":"m","mode":"url","mode":"form","requestedSchema":{}}`,
		"case-variant member":  `{"sessionId":"s","message":"m","Mode":"url","mode":"form","requestedSchema":{}}`,
	} {
		if _, err := question.New([]byte(params)); !errors.Is(err, acp.ErrInvalidParams) {
			t.Errorf("%s: New = %v, want ErrInvalidParams", name, err)
		}
	}
}

// TestNewRefusesUnservable: questions acpmux cannot serve are declined
// (ErrUnsupported), not errors to the agent.
func TestNewRefusesUnservable(t *testing.T) {
	for name, params := range map[string]string{
		"custom mode":       `{"sessionId":"s","message":"m","mode":"_voice"}`,
		"javascript url":    `{"sessionId":"s","message":"m","mode":"url","url":"javascript://x/%0aalert(1)","elicitationId":"e"}`,
		"file url":          `{"sessionId":"s","message":"m","mode":"url","url":"file://host/etc/passwd","elicitationId":"e"}`,
		"schema out of set": formParams(`{"properties":{"a":{"type":"object"}}}`),
	} {
		_, err := question.New([]byte(params))
		if !errors.Is(err, question.ErrUnsupported) || errors.Is(err, acp.ErrInvalidParams) {
			t.Errorf("%s: New = %v, want ErrUnsupported only", name, err)
		}
	}
}

func TestParseComplete(t *testing.T) {
	c, err := question.ParseComplete([]byte(`{"elicitationId":"el_1","_meta":{}}`))
	if err != nil || c.ElicitationID != "el_1" || string(c.Meta) != "{}" {
		t.Errorf("got %+v, %v", c, err)
	}
	for _, bad := range []string{`{}`, `{"elicitationId":1}`, `{"elicitationId":"a","elicitationID":"b"}`, `null`} {
		if _, err := question.ParseComplete([]byte(bad)); !errors.Is(err, acp.ErrInvalidParams) {
			t.Errorf("ParseComplete(%s) = %v, want ErrInvalidParams", bad, err)
		}
	}
}
