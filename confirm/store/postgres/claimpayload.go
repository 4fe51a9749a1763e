package postgres

import (
	"encoding/json"
	"strings"

	"github.com/acpmux/acpmux/confirm/store"
)

// maxPayload bounds a claim's NOTIFY payload below PostgreSQL's 8000
// bytes; a longer outcome (a long free-text answer) is notified by id.
const maxPayload = 7900

// claimPayload is the NOTIFY payload of a claim: the outcome the claim's
// transaction writes, so the owner needs no read ([Store.WatchClaims]).
type claimPayload struct {
	ID     string  `json:"id"`
	Status string  `json:"status"`
	Option *string `json:"option,omitempty"`
	Text   *string `json:"text,omitempty"`
	By     string  `json:"by"`
	Reason string  `json:"reason"`
	Person string  `json:"person,omitempty"`
	At     int64   `json:"at"`
}

// claimNotice returns the payload that notifies the claim of decision id
// by t: the JSON claimPayload, or the id alone when that is too long.
func claimNotice(id string, t store.Transition) string {
	p := claimPayload{ID: id, Status: string(t.Status), By: t.By, Reason: string(t.Reason), Person: t.Person, At: nanos(t.At)}
	if t.Answer != nil {
		p.Option, p.Text = &t.Answer.OptionID, &t.Answer.Text
	}
	b, err := json.Marshal(p)
	if err != nil || len(b) > maxPayload {
		return id
	}
	return string(b)
}

// parseNotice returns the decision id a notification's payload names and,
// for a claim's JSON payload, its outcome. A JSON payload that does not
// parse or names no decision yields id "" (the caller then looks at every
// decision of its own), and one of anything but an answer yields the id
// alone (the caller reads the row): it fails closed.
func parseNotice(payload string) (string, *store.Record) {
	if !strings.HasPrefix(payload, "{") {
		return payload, nil
	}
	var p claimPayload
	if err := json.Unmarshal([]byte(payload), &p); err != nil || p.ID == "" {
		return "", nil
	}
	if store.Status(p.Status) != store.StatusAnswered || p.Option == nil || p.Text == nil {
		return p.ID, nil
	}
	return p.ID, &store.Record{ID: p.ID, Status: store.StatusAnswered, ResolvedBy: p.By, Reason: store.Reason(p.Reason),
		Person: p.Person, ClosedAt: fromNanos(p.At), Answer: &store.Answer{OptionID: *p.Option, Text: *p.Text}}
}
