package main

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
)

// unreachable says, for a person, that no acpmux answered at base: which
// URL was tried and where the right one is found. err is what the HTTP
// client returned.
func unreachable(base string, err error) error {
	where := "acpmux run --listen and acpmux inbox log it (\"decisions API listening ... url=\", \"inbox listening ... url=\") and print the approvals page link, which --url also takes"
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("no acpmux is listening at %s; %s", base, where)
	}
	return fmt.Errorf("cannot reach acpmux at %s (%v); %s", base, err, where)
}

// unreachableWS is unreachable for the acp= WebSocket URL of acpmux
// attach.
func unreachableWS(url string, err error) error {
	where := "acpmux run --listen logs its URL (\"decisions API listening ... acp=ws://HOST:PORT/acp\")"
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("no acpmux is listening at %s; %s", url, where)
	}
	return fmt.Errorf("cannot reach acpmux at %s (%v); %s", url, err, where)
}

// questionHint turns the API's refusal of an answer of the wrong kind
// (options for a question, an action for a permission request) into the
// CLI flags to use instead; other errors come back as they are.
func questionHint(err error, id string) error {
	ae, ok := err.(*apiError)
	if !ok || ae.code != "invalid_answer" {
		return err
	}
	switch {
	case strings.Contains(ae.msg, "is not a question"):
		return fmt.Errorf("decision %s is a permission request: answer it with --option (acpmux decisions show %s lists the options)", id, id)
	case strings.Contains(ae.msg, "is a question"):
		return fmt.Errorf("decision %s is a question: answer it with --action accept, decline or cancel, and for accept --field NAME=VALUE (repeatable) or --content JSON (acpmux decisions show %s lists the fields)", id, id)
	}
	return err
}

// eventIDFlag is --after of decisions watch: 0 or a positive event id.
// Its zero state, -1, means only new events and is not typed.
type eventIDFlag struct{ id *int64 }

func (f eventIDFlag) String() string {
	if f.id == nil || *f.id < 0 {
		return ""
	}
	return strconv.FormatInt(*f.id, 10)
}

func (f eventIDFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return errors.New("want 0 (replay every stored event) or the positive id of an event (its #N); leave --after out for only new events")
	}
	*f.id = n
	return nil
}

// refusedToken says, for attach, that acpmux refused the bearer token and
// where a good one comes from; status is the HTTP status of the refusal.
func refusedToken(url, tokenFile string, status int) string {
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return ""
	}
	from := "--token-file"
	if tokenFile != "" {
		from = tokenFile
	}
	return fmt.Sprintf("%s refused the token in %s (HTTP %d); use the token file acpmux run --listen wrote (its --token-file, default $XDG_STATE_HOME/acpmux/token) or a person's token from acpmux token add (docs/tokens.md)", url, from, status)
}

// listenError is the error of --listen addr failing with err; an address
// in use says how to pick another.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("--listen %s: the address is in use (another acpmux, or another program, listens there): pick another port, or 127.0.0.1:0 for a free one (acpmux logs the port it got)", addr)
	}
	return fmt.Errorf("--listen: %w", err)
}
