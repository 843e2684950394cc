package actionitem

import (
	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/resource/ids"
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
	in.ProjectID, err = ids.Parse(project.ParseID, req.ProjectID)
	return in, err
}

// ParseFields validates an update; has reports which JSON keys the caller
// sent, so null (clear) differs from absent (keep).
func ParseFields(req UpdateRequest, has func(string) bool) (Fields, error) {
	var f Fields
	if req.Title != nil {
		t, err := ValidTitle(*req.Title)
		if err != nil {
			return f, err
		}
		f.Title = &t
	} else if has("title") {
		return f, pmapi.Invalid("title", "title cannot be null")
	}
	if has("description") {
		if err := ValidDescription(req.Description); err != nil {
			return f, err
		}
		f.Description = &req.Description
	}
	if req.Status != nil {
		f.Status = req.Status
	} else if has("status") {
		return f, pmapi.Invalid("status", "status cannot be null")
	}
	if has("ownerHint") {
		if err := ValidOwnerHint(req.OwnerHint); err != nil {
			return f, err
		}
		f.OwnerHint = &req.OwnerHint
	}
	if has("dueDate") {
		f.DueDate = &req.DueDate
	}
	return f, nil
}
