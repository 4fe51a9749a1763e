package confirm

import (
	"encoding/json"
	"github.com/acpmux/acpmux/confirm/store"

	"github.com/acpmux/acpmux/acp"
)

// rejectOption returns the option the agent gets when a decision fails
// closed: the first offered reject_once, else the first reject_always, else
// "" (the agent then gets "cancelled").
func rejectOption(opts []acp.PermissionOption) string {
	for _, k := range []acp.PermissionOptionKind{acp.RejectOnce, acp.RejectAlways} {
		for _, o := range opts {
			if o.Kind == k {
				return o.OptionID
			}
		}
	}
	return ""
}

// outcomeFor returns the optionId the agent receives for a closed decision,
// or "" for {"outcome":"cancelled"}.
func outcomeFor(opts []acp.PermissionOption, status store.Status, reason store.Reason, ans *Answer) string {
	if status == store.StatusAnswered && ans != nil && ans.OptionID != "" {
		return ans.OptionID
	}
	if turnEnded[reason] {
		return ""
	}
	return rejectOption(opts)
}

// buildResult serialises the RequestPermissionResponse for the agent from
// validated fields only. Free text travels in the result's _meta as
// {"acpmux":{"text":T}} (ACP "Extensibility": custom data only in _meta).
func buildResult(optionID, text string) json.RawMessage {
	resp := acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Outcome: acp.OutcomeCancelled}}
	if optionID != "" {
		resp.Outcome = acp.RequestPermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: optionID}
	}
	if text != "" {
		meta, _ := json.Marshal(map[string]map[string]string{"acpmux": {"text": text}})
		resp.Meta = meta
	}
	b, err := json.Marshal(resp)
	if err != nil {
		panic("confirm: marshal result: " + err.Error()) // only strings: cannot fail
	}
	return b
}
