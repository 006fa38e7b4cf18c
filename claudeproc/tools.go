package claudeproc

import (
	"slices"
	"sort"
)

// ToolUse says how a guarded session treats one of the CLI's built-in
// tools: every tool the CLI has is either offered, and then governed by
// the host or inert, or switched off (left out of --tools, so that the
// model never sees it). A tool this table does not know is off: a newer
// CLI's new tool reaches no session until it is classified here
// (TestRealCLIToolsClassified fails until then).
type ToolUse struct {
	// Offered tools are named to --tools.
	Offered bool
	// Why says what the tool does and why it is offered or not.
	Why string
}

// Tools classifies every built-in tool name the CLI has (2.1.309 to
// 2.1.330, the names its init line and tool_use blocks use, aliases
// included). Governed tools reach the host (can_use_tool) whenever the
// CLI does not settle them as read-only: the host's rules, people and the
// audit decide. Inert tools change nothing outside the conversation.
var Tools = map[string]ToolUse{
	// Governed: asked, matched by rules, decided by a person or a rule.
	"Bash":            {true, "governed: runs a command; asked unless the CLI reads it as read-only; command rules"},
	"Monitor":         {true, "governed: runs a command in the background; asked; command rules as for Bash"},
	"Edit":            {true, "governed: writes a file; asked; path rules, protected files"},
	"Write":           {true, "governed: writes a file; asked; path rules, protected files"},
	"NotebookEdit":    {true, "governed: writes a notebook; asked; path rules, protected files"},
	"Read":            {true, "governed: reads a file in the working directory (--restricted confines the file tools there)"},
	"Glob":            {true, "governed: lists files in the working directory"},
	"Grep":            {true, "governed: searches files in the working directory"},
	"WebFetch":        {true, "governed: fetches a URL; asked; domain rules"},
	"WebSearch":       {true, "governed: searches the web; asked"},
	"AskUserQuestion": {true, "governed: a person answers"},
	"ExitPlanMode":    {true, "governed: a person approves the plan"},
	"Agent":           {true, "governed: a subagent; each of its tool calls reaches the host like the session's own"},
	"Task":            {true, "governed: the subagent tool's name in the init line (Agent in tool_use)"},
	// Inert: nothing outside the conversation changes.
	"EnterPlanMode": {true, "inert: enters plan mode, which only asks more"},
	"TaskStop":      {true, "inert: stops a background task of this session"},
	"KillShell":     {true, "inert: older name of TaskStop"},
	"KillBash":      {true, "inert: older name of TaskStop"},
	"ToolSearch":    {true, "inert: loads the schema of an offered tool"},
	"TodoWrite":     {true, "inert: the session's own task list"},
	"TaskCreate":    {true, "inert: the session's own task list"},
	"TaskGet":       {true, "inert: the session's own task list"},
	"TaskList":      {true, "inert: the session's own task list"},
	"TaskUpdate":    {true, "inert: the session's own task list"},
	// Off: work started outside the bot's scheduler, quotas and budgets.
	"CronCreate":     {false, "off: schedules prompts inside the CLI, outside the bot's scheduler, quotas and schedule list"},
	"CronDelete":     {false, "off: the CLI's own schedules (CronCreate is off)"},
	"CronList":       {false, "off: the CLI's own schedules (CronCreate is off)"},
	"ScheduleWakeup": {false, "off: starts a turn by itself later, unasked"},
	"RemoteTrigger":  {false, "off: starts work elsewhere"},
	"Workflow":       {false, "off: runs workflow scripts of agents outside the host's view"},
	// Off: reaching other sessions or people outside the thread.
	"ListAgents":        {false, "off: lists the other Claude Code sessions on the machine"},
	"ListPeers":         {false, "off: older name of ListAgents"},
	"SendMessage":       {false, "off: messages another session, which acts on it on its owner's budget"},
	"SubagentHandback":  {false, "off: hands work between sessions"},
	"SendUserMessage":   {false, "off: messages the user outside the thread"},
	"Brief":             {false, "off: older name of SendUserMessage"},
	"SendUserFile":      {false, "off: sends files outside the thread (the bot's send_file posts into it)"},
	"PushNotification":  {false, "off: notifies outside the thread"},
	"ReadNotifications": {false, "off: the product's notifications"},
	// Off: leaving the working directory or the host's control.
	"EnterWorktree": {false, "off: moves the session into a worktree of the CLI's own, out of the bot's working directory"},
	"ExitWorktree":  {false, "off: see EnterWorktree"},
	"PowerShell":    {false, "off: runs commands the Bash rules do not read"},
	"LSP":           {false, "off: starts language servers"},
	"Skill":         {false, "off but with the repository's skills Start builds without their allowed-tools, hooks, …, whose calls alone the process allows (reposkills.go): a skill's allowed-tools let tools run without the host"},
	// Off: MCP resources (the bot's own server serves tools only).
	"ListMcpResourcesTool":   {false, "off: MCP resources; the bot's server has none"},
	"ReadMcpResourceTool":    {false, "off: MCP resources; the bot's server has none"},
	"ReadMcpResourceDirTool": {false, "off: MCP resources; the bot's server has none"},
	"WaitForMcpServers":      {false, "off: no MCP server but the bot's own"},
	// Off: product features with no place in a chat thread.
	"Artifact":                 {false, "off: a product surface"},
	"ClaudeDesign":             {false, "off: a product surface"},
	"EndConversation":          {false, "off: a product surface"},
	"OfferChromeSetup":         {false, "off: a product surface"},
	"Projects":                 {false, "off: a product surface"},
	"propose_skills":           {false, "off: a product surface"},
	"ReportFindings":           {false, "off: a product surface of review skills (no bundled skill is offered)"},
	"SendFeedback":             {false, "off: a product surface"},
	"SetGoal":                  {false, "off: a product surface"},
	"ProposeGoal":              {false, "off: older name of SetGoal"},
	"ShareOnboardingGuide":     {false, "off: a product surface"},
	"ShowOnboardingRolePicker": {false, "off: a product surface"},
}

// OfferedTools are the names a guarded session passes to --tools, sorted.
func OfferedTools() []string {
	var out []string
	for name, u := range Tools {
		if u.Offered {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Unclassified are the names in tools (an init line's) that Tools does not
// know, sorted: each must be classified before a new CLI is trusted.
func Unclassified(tools []string) []string {
	var out []string
	for _, t := range tools {
		if _, ok := Tools[t]; !ok && !slices.Contains(out, t) && !isMCPTool(t) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// isMCPTool: MCP servers' tools (mcp__<server>__<tool>) are not built in;
// only servers the host declares run (--strict-mcp-config).
func isMCPTool(name string) bool {
	return len(name) > 5 && name[:5] == "mcp__"
}
