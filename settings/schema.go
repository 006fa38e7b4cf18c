package settings

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Name names a setting, as the file, chat commands and `settings` spell it.
type Name string

// The settings.
const (
	Instructions      Name = "instructions"
	Model             Name = "model"
	Mode              Name = "mode"
	Effort            Name = "effort"
	Reply             Name = "reply"
	Memory            Name = "memory"
	Repo              Name = "repo"
	Image             Name = "image"
	Users             Name = "users"
	Admins            Name = "admins"
	MCP               Name = "mcp"
	BudgetThread      Name = "budget.thread"
	BudgetChannelDay  Name = "budget.channel_day"
	BudgetScheduleRun Name = "budget.schedule_run"
	Quota             Name = "quota"
)

// Kind is what a setting's value is.
type Kind int

const (
	KindText  Kind = iota // free text (instructions)
	KindWord              // one word: a model, an image, a repository
	KindEnum              // one of Spec.Values
	KindUsers             // user ids or patterns (*, ?, [...])
	KindNames             // names of operator-listed things (MCP servers)
	KindUSD               // an amount in US dollars, 0: none
	KindCount             // a count, 0: none
)

// Who may set a setting from chat.
type Who int

const (
	// ChannelAdmins: a channel's admins in their channel, bot admins anywhere.
	ChannelAdmins Who = iota
	// Tighten: as ChannelAdmins, but a channel admin may only make the
	// limit tighter than what applies without it (a smaller amount, not 0
	// where it is limited); bot admins set any value.
	Tighten
	// BotAdmins: bot admins only — the setting widens what a session
	// reaches or who may use the bot.
	BotAdmins
)

// Spec is a setting's definition.
type Spec struct {
	Name Name
	Kind Kind
	// Values are an enum's words, the first the default.
	Values []string
	Who    Who
	// Thread: the setting may also be given per thread (by the thread's
	// own commands, never by the file).
	Thread bool
	// Help says what the setting is, for `settings` and the docs.
	Help string
}

// MaxInstructions caps an instructions text, in characters.
const MaxInstructions = 8000

var specs = []Spec{
	{Name: Instructions, Kind: KindText, Who: ChannelAdmins, Help: "standing guidance appended to the system prompt of every session"},
	{Name: Model, Kind: KindWord, Who: ChannelAdmins, Thread: true, Help: "the model a new session starts with"},
	{Name: Mode, Kind: KindEnum, Values: []string{"default", "acceptEdits", "plan"}, Who: ChannelAdmins, Thread: true, Help: "the permission mode a new session starts in"},
	{Name: Effort, Kind: KindEnum, Values: []string{"default", "low", "medium", "high", "xhigh", "max"}, Who: ChannelAdmins, Thread: true, Help: "how hard the model thinks"},
	{Name: Reply, Kind: KindEnum, Values: []string{"thread", "mention"}, Who: ChannelAdmins, Help: "thread: every reply in a thread with a session goes to Claude; mention: only replies that mention the bot"},
	{Name: Memory, Kind: KindEnum, Values: []string{"anyone", "admins", "off"}, Who: ChannelAdmins, Help: "who may remember facts for the channel (and forget others' facts: admins)"},
	{Name: Repo, Kind: KindWord, Who: BotAdmins, Help: "the repository the channel's threads work in (a path or clone URL)"},
	{Name: Image, Kind: KindWord, Who: BotAdmins, Help: "the runner's image (docker, kubernetes)"},
	{Name: Users, Kind: KindUsers, Who: BotAdmins, Help: "who may use the bot"},
	{Name: Admins, Kind: KindUsers, Who: BotAdmins, Help: "who administers the channel (bot admins always do)"},
	{Name: MCP, Kind: KindNames, Who: BotAdmins, Help: "the operator's MCP servers the channel's sessions get"},
	{Name: BudgetThread, Kind: KindUSD, Who: Tighten, Help: "what one thread may spend, USD (0: no budget)"},
	{Name: BudgetChannelDay, Kind: KindUSD, Who: Tighten, Help: "what the channel may spend per UTC day, USD (0: no budget)"},
	{Name: BudgetScheduleRun, Kind: KindUSD, Who: Tighten, Help: "what one scheduled run may spend, USD (0: no budget)"},
	{Name: Quota, Kind: KindCount, Who: Tighten, Help: "live threads one person may have (0: no limit)"},
}

// Specs lists the settings in the order `settings` shows them.
func Specs() []Spec { return slices.Clone(specs) }

// Lookup finds a setting's Spec.
func Lookup(n Name) (Spec, bool) {
	for _, s := range specs {
		if s.Name == n {
			return s, true
		}
	}
	return Spec{}, false
}

var (
	wordRe = regexp.MustCompile(`^[^\s\x00-\x1f\x7f]{1,512}$`)
	nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	userRe = regexp.MustCompile(`^[^\s,\x00-\x1f\x7f]{1,255}$`)
)

// Parse checks text as a value of s and returns it canonical (lists
// comma-joined, amounts as numbers). The error says what is wrong in terms
// a person can act on.
func (s Spec) Parse(text string) (string, error) {
	text = strings.TrimSpace(text)
	switch s.Kind {
	case KindText:
		if n := utf8.RuneCountInString(text); n > MaxInstructions {
			return "", fmt.Errorf("%s: %d characters, at most %d", s.Name, n, MaxInstructions)
		}
		if !utf8.ValidString(text) {
			return "", fmt.Errorf("%s: not valid UTF-8", s.Name)
		}
		return text, nil
	case KindWord:
		if !wordRe.MatchString(text) {
			return "", fmt.Errorf("%s: one word of at most 512 characters, got %q", s.Name, text)
		}
		return text, nil
	case KindEnum:
		for _, v := range s.Values {
			if strings.EqualFold(v, text) {
				return v, nil
			}
		}
		return "", fmt.Errorf("%s: one of %s, got %q", s.Name, strings.Join(s.Values, ", "), text)
	case KindUsers, KindNames:
		return parseList(s, text)
	case KindUSD:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || f < 0 || f > 1e6 || f != f {
			return "", fmt.Errorf("%s: an amount in US dollars, 0 or more, got %q", s.Name, text)
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case KindCount:
		n, err := strconv.Atoi(text)
		if err != nil || n < 0 || n > 10000 {
			return "", fmt.Errorf("%s: a whole number, 0 or more, got %q", s.Name, text)
		}
		return strconv.Itoa(n), nil
	}
	return "", fmt.Errorf("%s: unknown kind", s.Name)
}

func parseList(s Spec, text string) (string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		re := userRe
		what := "user ids or patterns"
		if s.Kind == KindNames {
			re, what = nameRe, "names of letters, digits, _ and -"
		}
		if !re.MatchString(f) {
			return "", fmt.Errorf("%s: %s, got %q", s.Name, what, f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) > 1000 {
		return "", fmt.Errorf("%s: at most 1000 entries", s.Name)
	}
	return strings.Join(out, ","), nil
}

// tighter reports whether value is at least as tight a limit as wider
// (both canonical amounts or counts; 0 is no limit).
func tighter(value, wider string) bool {
	v, _ := strconv.ParseFloat(value, 64)
	w, _ := strconv.ParseFloat(wider, 64)
	if w == 0 {
		return true
	}
	return v != 0 && v <= w
}
