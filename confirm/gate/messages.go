package gate

// Fixed messages for plan-mode routing of shell commands (known writes,
// unavailable unknown approval surfaces and stale approvals use the fixed
// messages; docs/plan-mode.md); they state that plan mode stays active and forbid
// retrying a known write through wrappers or obfuscation. Hosts and hooks
// must show them verbatim.
const (
	// WriteBlockMessage is the reason given when plan mode blocks a
	// command classified Write ("plan block").
	WriteBlockMessage = "Plan mode blocked this shell command because it was classified as state-modifying. Do not retry it through wrappers or obfuscation; continue read-only investigation and include the action in the plan."

	// UnknownWarning is the warning shown with the exact one-off prompt
	// for a command classified Unknown.
	UnknownWarning = "Plan mode could not determine whether this shell command is read-only. Approval applies only to this exact invocation once; it may modify system state, and Plan mode will remain active."

	// NoApprovalMessage is the plan-safe refusal for an Unknown command
	// when no host can show a prompt.
	NoApprovalMessage = "Plan mode could not determine whether this shell command is read-only, and no approval surface is available. The command was not run; Plan mode remains active."

	// StaleApprovalMessage is the refusal when an approval no longer
	// matches the snapshot it was given for.
	StaleApprovalMessage = "Plan-mode shell approval is no longer valid because the mode, permission policy, or exact invocation changed. Submit a new tool call."
)

// Messages of acpmux's own, for the other decisions a plan-mode gate or
// hook makes. They are fixed for the same reason: hosts and tests match them.
const (
	// ReadOnlyAllowMessage is the reason given when plan mode runs a
	// command classified ReadOnly without asking.
	ReadOnlyAllowMessage = "acpmux: read-only shell command; allowed in plan mode (builtin:plan-read-only)."

	// ExitPlanModeMessage is the reason given when leaving plan mode is
	// turned into a question for the human: it always needs one.
	ExitPlanModeMessage = "acpmux: leaving plan mode needs a human. Review the plan before approving; nothing has been changed yet."

	// StrictWriteMessage is the reason given outside plan mode, in strict
	// mode, when a command classified Write is turned into a question.
	StrictWriteMessage = "acpmux: this shell command changes state (classified write). Approve only if you expect that change."

	// StrictUnknownMessage is the reason given outside plan mode, in
	// strict mode, when a command classified Unknown is turned into a
	// question.
	StrictUnknownMessage = "acpmux: could not determine whether this shell command is read-only (classified unknown). It may modify system state."
)
