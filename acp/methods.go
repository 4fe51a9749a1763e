package acp

// Method names of ACP v1 (schema/v1/schema.json, x-method) that acpmux routes
// on. Any other method, including "_"-prefixed extension methods, is forwarded
// untouched.
const (
	// Client → agent requests.
	MethodInitialize        = "initialize"
	MethodAuthenticate      = "authenticate"
	MethodSessionNew        = "session/new"
	MethodSessionLoad       = "session/load"
	MethodSessionResume     = "session/resume"
	MethodSessionPrompt     = "session/prompt"
	MethodSessionSetMode    = "session/set_mode"
	MethodSessionClose      = "session/close"
	MethodSessionCancel     = "session/cancel" // notification
	MethodCancelRequest     = "$/cancel_request"
	MethodSessionUpdate     = "session/update" // agent → client notification
	MethodRequestPermission = "session/request_permission"

	// Agent → client elicitation (ACP "Elicitation"): a request and the
	// notification that ends a URL-mode elicitation.
	MethodElicitationCreate   = "elicitation/create"
	MethodElicitationComplete = "elicitation/complete" // notification

	// Agent → client requests bound to the machine of one host.
	PrefixFS       = "fs/"
	PrefixTerminal = "terminal/"
)
