package gate

// Fixed messages of acpmux's plan-mode gate for tool calls that are not
// shell commands, and of its policy and circuit breaker. Like the messages
// in messages.go they are fixed so that hosts, agents and tests can match
// them; docs/plan-mode.md lists them all.
const (
	// EditBlockMessage is the reason given when plan mode blocks an edit,
	// delete or move tool call (ACP tool kinds edit, delete, move).
	EditBlockMessage = "Plan mode blocked this file change because edits, deletes and moves are not allowed while Plan mode is active. Do not retry it through shell commands or other tools; continue read-only investigation and include the change in the plan."

	// ReadOnlyAskWarning is the warning shown with the exact one-off prompt
	// for a read-only shell command that a user policy rule turned into ask.
	ReadOnlyAskWarning = "A policy rule asks before this read-only shell command runs in Plan mode. Approval applies only to this exact invocation once, and Plan mode will remain active."

	// PolicyDenyMessage is the reason given when an acpmux policy rule
	// denies a tool call (including an ask downgraded to deny for a read,
	// search, fetch, think or interactive call).
	PolicyDenyMessage = "acpmux policy denied this tool call. Do not retry it through wrappers or other tools."

	// AutoApproveRefusedMessage is the refusal of an exact one-off prompt
	// (plan mode) that --auto-approve will not answer and no host can.
	AutoApproveRefusedMessage = "acpmux --auto-approve does not answer exact one-off prompts: no human saw this warning. The command was not run; Plan mode remains active."

	// DivergeBlockMessage is the reason given when plan mode refuses a
	// shell command that bash may read differently from the classifier
	// (Verdict.Diverges): a comment, here-document or command that may
	// begin or end elsewhere under bash. No host is asked, since the text
	// a person would approve is not the program bash would run.
	DivergeBlockMessage = "Plan mode refused this shell command because bash may read it differently from how acpmux parsed it (see the reasons: a comment, here-document, line continuation or byte that bash treats otherwise). The command was not run and no approval was asked for; rewrite it in plain form. Plan mode remains active."

	// ModeLockedMessage is the reason given when the agent asks to leave
	// plan mode (ACP tool kind switch_mode) while --lock-mode keeps the gate
	// in plan mode: no host is asked, since no approval could leave it.
	ModeLockedMessage = "acpmux keeps this session in Plan mode (--lock-mode): leaving Plan mode is not possible and no approval was asked for. Continue read-only investigation and present the plan."

	// BreakerMessage is the reason given when the circuit breaker stopped
	// the prompt turn after repeated denials; every further permission
	// request of that turn is denied.
	BreakerMessage = "acpmux stopped this prompt turn after repeated denied tool calls. Do not retry the denied actions; wait for the user's next prompt."
)

// Warnings the broker adds to a prompt for the command classes of its
// classifier (confirm.Options.Classify).
const (
	WarningUnknownCommand = "acpmux could not determine whether this shell command is read-only; it may change files or system state."
	WarningWriteCommand   = "This shell command can change files or system state."
	WarningClassifyFailed = "acpmux could not classify this shell command; treat it as able to change files or system state."
)

// Warning prefixes of the hidden-character warnings; the names of the
// characters follow, separated by ", ".
const (
	WarningHiddenInCommand = "The shell command contains hidden characters (shown escaped): "
	WarningHiddenInTitle   = "The title contains hidden characters (shown escaped): "
)

// BreakerNotice is the text hosts are told when the breaker cancels a turn.
const BreakerNotice = "The prompt turn was cancelled; every further permission request of this turn is denied. The trip clears on the next prompt from a host."
