package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"
)

// fieldList collects repeated --field NAME=VALUE flags.
type fieldList []string

func (l *fieldList) String() string { return strings.Join(*l, " ") }
func (l *fieldList) Set(s string) error {
	if !strings.Contains(s, "=") {
		return fmt.Errorf("want NAME=VALUE, e.g. --field %s=… (acpmux decisions show lists the fields)", s)
	}
	*l = append(*l, s)
	return nil
}

// questionJSON is a question as the API shows it (docs/decisions.md,
// "Questions"), with its journal.
type questionJSON struct {
	question.View
	Events []store.Event `json:"events"`
}

// answerQuestion answers question id with --action and, for accept, the
// content from --field (typed by the question's schema, fetched first) or
// --content. The server validates it against the question.
func (c *apiClient) answerQuestion(w io.Writer, f decisionsFlags, id string) error {
	body := map[string]any{"action": f.action}
	switch {
	case f.content != "":
		var content map[string]any
		if err := json.Unmarshal([]byte(f.content), &content); err != nil || content == nil {
			return fmt.Errorf("--content must be one JSON object")
		}
		body["content"] = json.RawMessage(f.content)
	case len(f.fields) > 0:
		var q questionJSON
		var raw json.RawMessage
		if err := c.do("GET", decisionPath(f, id), nil, &q, &raw); err != nil {
			return err
		}
		if q.Kind != question.Kind || len(q.RequestedSchema) == 0 {
			return fmt.Errorf("decision %s is not a form question: --field does not apply", id)
		}
		s, err := question.Compile(q.RequestedSchema)
		if err != nil {
			return err
		}
		content, err := s.ParseFields(f.fields)
		if err != nil {
			return err
		}
		body["content"] = content
	}
	var resp questionJSON
	var raw json.RawMessage
	if err := c.do("POST", decisionPath(f, id), body, &resp, &raw); err != nil {
		return questionHint(err, id) // hints.go
	}
	if f.asJSON {
		return writeIndented(w, raw)
	}
	var dedup struct{ Deduped bool }
	_ = json.Unmarshal(raw, &dedup)
	note := ""
	if dedup.Deduped {
		note = " (already recorded: same answer)"
	}
	fmt.Fprintf(w, "question %s %s by %s: %s%s\n", resp.ID, resp.Status, answerer(answeredPerson("", resp.Events), resp.ResolvedBy), describeQuestionAnswer(resp.Answer), note)
	return nil
}

func describeQuestionAnswer(a *question.Answer) string {
	if a == nil {
		return "no answer"
	}
	if a.Content == nil {
		return string(a.Action)
	}
	b, _ := json.Marshal(a.Content)
	return string(a.Action) + " " + safe(string(b))
}

// printQuestion writes q for a human; text from the agent goes through safe.
func printQuestion(w io.Writer, q questionJSON) {
	fmt.Fprintf(w, "question  %s\nsession   %s\nstatus    %s", q.ID, q.SessionID, q.Status)
	if q.Reason != "" {
		fmt.Fprintf(w, " (%s)", q.Reason)
	}
	fmt.Fprintf(w, "\nprompt    %s\nmode      %s\n", safe(q.Prompt), q.Mode)
	if q.URL != "" {
		fmt.Fprintf(w, "url       %s\n", safe(q.URL))
	}
	fmt.Fprintf(w, "created   %s\ndeadline  %s\n", q.CreatedAt.Local().Format(time.RFC3339), q.Deadline.Local().Format(time.RFC3339))
	if len(q.RequestedSchema) > 0 {
		if s, err := question.Compile(q.RequestedSchema); err == nil {
			fmt.Fprintln(w, "fields:")
			rows := make([][]string, 0, len(s.Properties))
			for _, p := range s.Properties {
				req := ""
				if p.Required {
					req = " (required)"
				}
				rows = append(rows, []string{"--field " + safe(p.Name) + "=…", fmt.Sprintf("%s%s%s", p.Type, req, fieldLimits(p))})
			}
			writeColumns(w, "  ", rows) // columns.go
		}
	}
	if q.Answer != nil {
		fmt.Fprintf(w, "answer    %s by %s\n", describeQuestionAnswer(q.Answer), answerer(answeredPerson("", q.Events), q.ResolvedBy))
	}
	fmt.Fprintln(w, "journal:")
	writeJournal(w, q.Events) // columns.go
}
