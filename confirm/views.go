package confirm

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"

	"github.com/acpmux/acpmux/acp"
)

// View is a decision as the HTTP API and the CLI show it (JSON in
// camelCase; docs/decisions.md, "The decision object"). Answer is null while
// open; Reason, ResolvedBy and ClosedAt are set once closed; Events is the
// ordered journal. Kind is "permission" or "question"; a question's view
// is Question (docs/decisions.md, "Questions"), and its JSON is that shape
// plus delivered and events (see MarshalJSON).
type View struct {
	ID                  string                 `json:"id"`
	Kind                string                 `json:"kind"`
	SessionID           string                 `json:"sessionId"`
	Status              store.Status           `json:"status"`
	Reason              store.Reason           `json:"reason,omitempty"`
	Title               string                 `json:"title"`
	ToolCall            acp.ToolCallUpdate     `json:"toolCall"`
	Command             string                 `json:"command,omitempty"`
	Classification      *Classification        `json:"classification,omitempty"`
	Warnings            []string               `json:"warnings"`
	Options             []acp.PermissionOption `json:"options"`
	AllowFreeText       bool                   `json:"allowFreeText"`
	Answer              *Answer                `json:"answer"`
	ResolvedBy          string                 `json:"resolvedBy,omitempty"`
	AnsweredBy          string                 `json:"answeredBy,omitempty"` // the person of the winning answer (docs/tokens.md)
	CreatedAt           time.Time              `json:"createdAt"`
	Deadline            time.Time              `json:"deadline"`
	ClosedAt            *time.Time             `json:"closedAt,omitempty"`
	Delivered           bool                   `json:"delivered"`
	Cwd                 string                 `json:"cwd"`
	ModeRevision        uint64                 `json:"modeRevision"`
	RequestSHA256       string                 `json:"requestSha256"`
	DisplayedText       string                 `json:"displayedText"`
	DisplayedTextSHA256 string                 `json:"displayedTextSha256"`
	Events              []store.Event          `json:"events"`
	// Bridge names the bridge whose agent asked, in a store several
	// bridges share (docs/inbox.md); nil otherwise.
	Bridge *BridgeRef `json:"bridge,omitempty"`
	// Question is the view of a question (Kind "question"), nil for a
	// permission decision.
	Question *question.View `json:"-"`
}

// MarshalJSON encodes v: a permission decision with the fields of View, a
// question as its [question.View] plus "delivered" and "events".
func (v View) MarshalJSON() ([]byte, error) {
	if v.Question == nil {
		type plain View
		return json.Marshal(plain(v))
	}
	return json.Marshal(struct {
		question.View
		Delivered bool          `json:"delivered"`
		Events    []store.Event `json:"events"`
		Bridge    *BridgeRef    `json:"bridge,omitempty"`
	}{*v.Question, v.Delivered, v.Events, v.Bridge})
}

// SessionView is one session in the HTTP API's session list.
type SessionView struct {
	SessionID     string    `json:"sessionId"`
	Cwd           string    `json:"cwd"`
	OpenDecisions int       `json:"openDecisions"`
	Decisions     int       `json:"decisions"` // decisions of this process still in memory
	LastActivity  time.Time `json:"lastActivity"`
	// Bridge names the session's bridge in a store several bridges share
	// (docs/inbox.md); nil otherwise.
	Bridge *BridgeRef `json:"bridge,omitempty"`
}

// viewOf fills the immutable fields of a view from a snapshot.
func viewOf(id string, s Snapshot, created, deadline time.Time) View {
	s = s.clone()
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	return View{ID: id, Kind: kindPermission, SessionID: s.SessionID, Title: s.Title, ToolCall: s.ToolCall, Command: s.Command,
		Classification: s.Classification, Warnings: s.Warnings, Options: s.Options, AllowFreeText: s.AllowFreeText,
		CreatedAt: created, Deadline: deadline, Cwd: s.Cwd, ModeRevision: s.ModeRevision,
		RequestSHA256: s.RequestSHA256, DisplayedText: s.DisplayedText, DisplayedTextSHA256: s.DisplayedTextSHA256,
		Events: []store.Event{}}
}

// viewOfRecord builds the view of a stored decision. The error says the
// stored snapshot cannot be read.
func viewOfRecord(r store.Record) (View, error) {
	snap, err := snapshotOf(r)
	if err != nil {
		return View{}, err
	}
	return viewWithSnapshot(r, snap), nil
}

// viewWithSnapshot is viewOfRecord with snap, r's decoded snapshot
// (snapshotOf; a stored decision's snapshot never changes).
func viewWithSnapshot(r store.Record, snap Snapshot) View {
	v := viewOf(r.ID, snap, r.CreatedAt, r.Deadline)
	v.Status = r.Status
	if r.Answer != nil {
		v.Answer = &Answer{OptionID: r.Answer.OptionID, Text: r.Answer.Text, Scope: policy.Scope(r.Answer.Scope)}
	}
	if r.Status.Closed() {
		v.Reason, v.ResolvedBy, v.AnsweredBy = r.Reason, r.ResolvedBy, r.Person
		at := r.ClosedAt
		v.ClosedAt = &at
	}
	v.Delivered = !r.DeliveredAt.IsZero()
	if r.Events != nil {
		v.Events = r.Events
		for _, ev := range r.Events {
			if ev.Type == store.EventAnswered && ev.Person != "" {
				v.AnsweredBy = ev.Person
			}
		}
	}
	if snap.isQuestion() {
		v.Answer = nil
		questionView(&v, &snap, questionAnswerOf(r.Answer))
	}
	return v
}

// snapshotOf decodes the snapshot of a stored decision.
func snapshotOf(r store.Record) (Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(r.Snapshot, &s); err != nil {
		return s, fmt.Errorf("decision %s: snapshot: %w", r.ID, err)
	}
	s.Request = json.RawMessage(r.Request)
	if s.isQuestion() {
		q, err := question.New(s.Request)
		if err != nil {
			p, perr := question.ParseParams(s.Request)
			if perr != nil {
				return s, fmt.Errorf("decision %s: question: %w", r.ID, perr)
			}
			q = &question.Question{Params: p}
		}
		s.q = q
	}
	return s, nil
}

// recordOf is the store's form of the decision d opening with event opened.
func recordOf(d *Decision, opened store.Event) (store.Record, error) {
	snap, err := json.Marshal(d.snap)
	if err != nil {
		return store.Record{}, err
	}
	return store.Record{ID: d.id, SessionID: d.snap.SessionID, AgentKey: d.snap.AgentKey, Request: d.snap.Request,
		Snapshot: snap, Status: store.StatusOpen, CreatedAt: d.created, Deadline: d.deadline,
		Events: []store.Event{opened}}, nil
}

// Sessions returns the sessions this broker knows (from TrackSession, Ask,
// ToolCallUpdate or AddPresenter), sorted by session id.
func (b *Broker) Sessions() []SessionView {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]SessionView, 0, len(b.sessions))
	for _, s := range b.sessions {
		out = append(out, SessionView{SessionID: s.id, Cwd: s.cwd, OpenDecisions: len(s.open),
			Decisions: len(s.open) + len(s.closed), LastActivity: s.last})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SessionID < out[j].SessionID })
	return out
}

// HasSession reports whether the broker knows session sessionID.
func (b *Broker) HasSession(sessionID string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions[sessionID] != nil
}

// maxListed bounds the stored decisions Decisions reads for one session.
const maxListed = 1000

// Decisions returns the decisions of sessionID, oldest first: the ones in
// memory with their journals, plus up to 1000 stored ones (from earlier
// processes or evicted from memory) without their journals (Events empty;
// Decision returns it). An error comes only from the store.
func (b *Broker) Decisions(ctx context.Context, sessionID string) ([]View, error) {
	b.mu.Lock()
	var ds []*Decision
	if s := b.sessions[sessionID]; s != nil {
		ds = append(ds, s.closed...)
		for _, d := range s.open {
			ds = append(ds, d)
		}
	}
	b.mu.Unlock()
	seen := make(map[string]bool, len(ds))
	out := make([]View, 0, len(ds))
	for _, d := range ds {
		seen[d.id] = true
		out = append(out, d.View())
	}
	if b.store != nil {
		recs, err := b.listStored(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if seen[r.ID] {
				continue
			}
			v, err := viewOfRecord(r)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// Decision returns decision decisionID of session sessionID with its
// journal, from memory or else from the store. The error wraps [store.ErrNotFound]
// when there is no such decision in that session.
func (b *Broker) Decision(ctx context.Context, sessionID, decisionID string) (View, error) {
	b.mu.Lock()
	d := b.byID[decisionID]
	b.mu.Unlock()
	if d != nil && d.snap.SessionID == sessionID {
		return d.View(), nil
	}
	if b.store == nil {
		return View{}, store.ErrNotFound
	}
	r, err := b.store.Get(ctx, decisionID)
	if err != nil {
		return View{}, err
	}
	if r.SessionID != sessionID {
		return View{}, store.ErrNotFound
	}
	return viewOfRecord(r)
}
