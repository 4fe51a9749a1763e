package bridge

import (
	"reflect"
	"testing"
)

// TestOfferedPlanMode: the agent's plan mode is a modes.availableModes id
// containing "plan", else a value containing "plan" of the "mode" config
// option (flat or grouped options; the option is the one with id "mode" in
// any case or category "mode"); none otherwise.
func TestOfferedPlanMode(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		want         agentModes
	}{
		{"modes", `{"sessionId":"s","modes":{"currentModeId":"default","availableModes":[{"id":"default"},{"id":"plan"}]}}`,
			agentModes{planID: "plan", current: "default"}},
		{"mode id containing plan", `{"modes":{"currentModeId":"ask","availableModes":[{"id":"ask"},{"id":"architect-plan"}]}}`,
			agentModes{planID: "architect-plan", current: "ask"}},
		{"config option", `{"configOptions":[{"id":"model","currentValue":"x","options":[{"value":"planner-model"}]},{"id":"mode","currentValue":"code","options":[{"value":"code"},{"value":"Plan"}]}]}`,
			agentModes{planID: "Plan", viaConfig: true, configID: "mode", current: "code"}},
		{"grouped config option", `{"configOptions":[{"id":"mode","currentValue":"code","options":[{"group":"g","name":"G","options":[{"value":"code"},{"value":"plan"}]}]}]}`,
			agentModes{planID: "plan", viaConfig: true, configID: "mode", current: "code"}},
		{"config option of category mode", `{"configOptions":[{"id":"agent_mode","category":"mode","currentValue":"code","options":[{"value":"code"},{"value":"plan"}]}]}`,
			agentModes{planID: "plan", viaConfig: true, configID: "agent_mode", current: "code"}},
		{"no plan mode", `{"modes":{"currentModeId":"default","availableModes":[{"id":"default"},{"id":"yolo"}]}}`, agentModes{}},
		{"nothing", `{"sessionId":"s"}`, agentModes{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := offeredPlanMode([]byte(tc.result)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
