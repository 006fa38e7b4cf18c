package claudeproc

import "encoding/json"

// decideSkill answers a guarded session's Skill call itself and reports
// whether it did. A session offered the Skill tool has only the skills
// Start built of its repository and of the operator's plugins
// (reposkills.go, operatorplugins.go): a call to one of them is allowed,
// since the skill is text the repository or the operator already shows
// the model, stripped of every key that could run or decide something; a
// call to any other name (a bundled skill, an unknown one, a name without
// its plugin's prefix) is refused. Neither needs a person,
// and no host rule could make another skill safe. It runs on the reader,
// as screenMCP does: the answer is one short line.
func (p *Process) decideSkill(ev Event) bool {
	cr, ok := ev.(*ControlRequest)
	if !ok || cr.CanUseTool == nil || cr.CanUseTool.ToolName != "Skill" || p.opts.Guard == nil {
		return false
	}
	var in struct {
		Skill string `json:"skill"`
	}
	_ = json.Unmarshal(cr.CanUseTool.Input, &in)
	var err error
	if p.opts.offersSkill(in.Skill) {
		p.log.Info("claude: a built skill called", "skill", in.Skill)
		err = p.Allow(cr.RequestID, cr.CanUseTool.Input, nil)
	} else {
		p.log.Warn("claude: refused a Skill call", "skill", in.Skill)
		err = p.Deny(cr.RequestID, "Only the skills listed can be used here (<plugin>:<name>: the repository's "+SkillsPlugin+":<name>, an operator plugin's).", false)
	}
	if err != nil {
		p.log.Warn("claude: answer a Skill call", "err", err)
	}
	return true
}
