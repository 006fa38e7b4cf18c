package adapters

// PromptKind says what a prompt asks.
type PromptKind int

const (
	// PromptApproval asks whether a tool may run: Allow / Allow for thread /
	// Always allow / Deny.
	PromptApproval PromptKind = iota
	// PromptQuestion asks Claude's AskUserQuestion questions.
	PromptQuestion
)

// ApprovalChoices are every approval choice, in the order every platform
// shows them. A prompt offers the subset in its Choices; an adapter shows
// exactly those, and a click on any other is refused by the bot.
var ApprovalChoices = []Choice{
	{ID: ChoiceAllow, Label: "Allow", Typed: "allow"},
	{ID: ChoiceAllowThread, Label: "Allow for thread", Typed: "allow thread"},
	{ID: ChoiceAllowFolder, Label: "Allow folder for thread", Typed: "allow folder"},
	{ID: ChoiceAllowAlways, Label: "Always allow", Typed: "allow always"},
	{ID: ChoiceDeny, Label: "Deny", Typed: "deny [reason]"},
}

// Choice is one button of an approval prompt.
type Choice struct {
	ID    ChoiceID // sent back in Click.Choice
	Label string
	Typed string // the typed reply that makes the same choice
}

// Option is one answer of a question.
type Option struct {
	Label       string
	Description string
}

// Question is one of AskUserQuestion's questions. Free text ("Other") is
// always possible by replying in the thread.
type Question struct {
	Text    string
	Header  string
	Options []Option
	Multi   bool
}

// PromptState is where a prompt stands; prompts are edited when it changes.
type PromptState int

const (
	PromptPending PromptState = iota
	PromptDecided
	PromptExpired
	PromptCancelled
)

// Prompt is an approval request or a question. ID is opaque: it is all a
// click carries back.
type Prompt struct {
	ID   string
	Kind PromptKind
	// Title: "Bash wants to run", "Claude asks".
	Title string
	// Tool and Detail show what is asked: the exact command, a diff-like view
	// of an edit, whole and as plain text (not Markdown). An adapter shows
	// all of it: what does not fit one message is uploaded whole as a file
	// in the thread before the prompt and its controls are posted (the
	// console prints it in full). A person never decides on a part.
	Tool   string
	Detail string
	// Note is Markdown shown under the detail: what a grant would allow,
	// how to name this prompt when several are open.
	Note string
	// Choices for PromptApproval: a subset of ApprovalChoices, in order.
	Choices []Choice
	// Questions for PromptQuestion.
	Questions []Question

	State PromptState
	// Outcome says who decided what, once State is not pending: "Allowed by
	// @ana", "Denied by @bo: too risky", "Expired".
	Outcome string
}
