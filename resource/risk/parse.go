package risk

import (
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/internal/validate"
	"github.com/pmapi/pmapi/resource/project"
)

// ParseCreate turns a decoded create body into a validated NewRisk (severity
// MEDIUM when left out). A missing projectId is a bad request; a malformed
// one names no project (404).
func ParseCreate(req CreateRequest) (NewRisk, error) {
	in := NewRisk{Description: req.Description, Severity: "MEDIUM"}
	var err error
	in.Title, err = validate.InProject(req.ProjectID, req.Title, req.Description, ValidTitle, ValidDescription)
	if err != nil {
		return in, err
	}
	if req.Severity != "" {
		if err := ValidSeverity(req.Severity); err != nil {
			return in, err
		}
		in.Severity = req.Severity
	}
	if in.OwnerID, err = validate.OptionalUser("ownerId", req.OwnerID); err != nil {
		return in, err
	}
	in.ProjectID, err = project.ParseID(req.ProjectID)
	return in, err
}

// ParseUpdate turns a decoded update body into the risk's id and validated
// changes; has tells a null field (clear it) from an absent one. Whether a
// status move is allowed depends on the stored status, so the store checks it.
func ParseUpdate(req UpdateRequest, has func(string) bool) (uuid.UUID, Changes, error) {
	var ch Changes
	if err := validate.Required("riskId", req.RiskID); err != nil {
		return uuid.Nil, ch, err
	}
	var err error
	if ch.Status, err = validate.Given(has, "status", req.Status, validate.AsIs); err != nil {
		return uuid.Nil, ch, err
	}
	ch.Title, ch.Description, err = validate.TitleAndDescription(has, req.Title, req.Description,
		ValidTitle, ValidDescription)
	if err != nil {
		return uuid.Nil, ch, err
	}
	if ch.Severity, err = validate.Given(has, "severity", req.Severity, validate.Checked(ValidSeverity)); err != nil {
		return uuid.Nil, ch, err
	}
	if ch.OwnerID, err = validate.Nullable(has, "ownerId", req.OwnerID, validate.User("ownerId")); err != nil {
		return uuid.Nil, ch, err
	}
	id, err := ParseID(req.RiskID)
	return id, ch, err
}
