package actionitem

import (
	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/internal/validate"
	"github.com/pmapi/pmapi/resource/project"
)

// ParseCreate turns a decoded create body into a validated NewItem.
func ParseCreate(req CreateRequest) (NewItem, error) {
	in := NewItem{Description: req.Description, OwnerHint: req.OwnerHint, DueDate: req.DueDate}
	var err error
	if in.Title, err = ValidTitle(req.Title); err != nil {
		return in, err
	}
	if err := ValidDescription(req.Description); err != nil {
		return in, err
	}
	if err := ValidOwnerHint(req.OwnerHint); err != nil {
		return in, err
	}
	in.ProjectID, err = pmapi.ParseOptionalID(project.ParseID, req.ProjectID)
	return in, err
}

// ParseFields validates an update; has reports which JSON keys the caller
// sent, so null (clear) differs from absent (keep).
func ParseFields(req UpdateRequest, has func(string) bool) (Fields, error) {
	var f Fields
	var err error
	f.Title, f.Description, err = validate.TitleAndDescription(has, req.Title, req.Description,
		ValidTitle, ValidDescription)
	if err != nil {
		return f, err
	}
	if f.Status, err = validate.Given(has, "status", req.Status, validate.AsIs); err != nil {
		return f, err
	}
	checkOwnerHint := validate.Checked(ValidOwnerHint)
	if f.OwnerHint, err = validate.Nullable(has, "ownerHint", req.OwnerHint, checkOwnerHint); err != nil {
		return f, err
	}
	f.DueDate, err = validate.Nullable(has, "dueDate", req.DueDate, validate.AsIs)
	return f, err
}
