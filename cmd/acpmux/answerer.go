package main

import (
	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm/store"
)

// answerer names who answered for a person reading a terminal: "PERSON via
// HOST" when the answer came with a per-person token (docs/tokens.md),
// else HOST alone, also for the --token-file token (its person
// httpapi.LegacyPerson names no one). Both go through safe.
func answerer(person, host string) string {
	if person == "" || person == httpapi.LegacyPerson {
		return safe(host)
	}
	return safe(person) + " via " + safe(host)
}

// answeredPerson is the person of a decision's winning answer: the view's
// answeredBy when it has one, else the person of the last answered event
// of its journal (a question's view has no answeredBy); "" when none.
func answeredPerson(answeredBy string, events []store.Event) string {
	if answeredBy != "" {
		return answeredBy
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == store.EventAnswered {
			return events[i].Person
		}
	}
	return ""
}
