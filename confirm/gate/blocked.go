package gate

// Blocked describes a permission request the gate refused without asking
// any host: plan mode blocked it ([RoutePlanBlock]) or a policy rule denied
// it ([RouteDeny]). See docs/plan-mode.md, "What the hosts see".
type Blocked struct {
	SessionID  string `json:"sessionId"`
	DecisionID string `json:"decisionId"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Command is the shell command, or the tool call's title when there
	// is none.
	Command string `json:"command"`
	// FromTitle is set when Command is the tool call's title: the tool
	// call has no shell command. It is not sent to hosts.
	FromTitle bool `json:"-"`
	// Class is the classifier's class of Command ("read-only", "write",
	// "unknown"), "" when it is not a shell command.
	Class string `json:"class,omitempty"`
	// Route is RoutePlanBlock or RouteDeny; Mode the gate mode then.
	Route Route `json:"route"`
	Mode  Mode  `json:"mode"`
	// Rule is what decided: rule:NAME, builtin:..., a remembered verdict.
	Rule string `json:"rule"`
	// Message is the fixed message the agent was given.
	Message string `json:"message,omitempty"`
}
