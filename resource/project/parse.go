package project

import (
	"github.com/google/uuid"

	"github.com/pmapi/pmapi/resource/internal/validate"
)

// ParseCreate turns a decoded create body into a validated NewProject.
func ParseCreate(req CreateRequest) (NewProject, error) {
	in := NewProject{
		Settings: Settings{
			Description: req.Description,
			RAGStatus:   Green,
			StartDate:   req.StartDate,
			TargetDate:  req.TargetDate,
		},
	}
	var err error
	if in.Name, err = ValidName(req.Name); err != nil {
		return in, err
	}
	if err := ValidDescription(req.Description); err != nil {
		return in, err
	}
	if req.RAGStatus != "" {
		if err := ValidRAG("ragStatus", req.RAGStatus); err != nil {
			return in, err
		}
		in.RAGStatus = req.RAGStatus
	}
	if err := ValidDates(req.StartDate, req.TargetDate); err != nil {
		return in, err
	}
	if in.OwnerID, err = validate.OptionalUser("ownerId", req.OwnerID); err != nil {
		return in, err
	}
	for _, m := range req.MemberIDs {
		id, err := validate.UserID("memberIds", m)
		if err != nil {
			return in, err
		}
		in.MemberIDs = append(in.MemberIDs, id)
	}
	return in, nil
}

// ParseUpdate turns a decoded update body into the project's id and the
// validated fields; has tells a null field (clear it) from an absent one.
func ParseUpdate(req UpdateRequest, has func(string) bool) (uuid.UUID, Fields, error) {
	var f Fields
	id, err := ParseID(req.ID)
	if err != nil {
		return id, f, err
	}
	if f.Name, err = validate.Given(has, "name", req.Name, ValidName); err != nil {
		return id, f, err
	}
	checkDescription := validate.Checked(ValidDescription)
	if f.Description, err = validate.Nullable(has, "description", req.Description, checkDescription); err != nil {
		return id, f, err
	}
	if f.OwnerID, err = validate.Nullable(has, "ownerId", req.OwnerID, validate.User("ownerId")); err != nil {
		return id, f, err
	}
	checkRAG := validate.Checked(func(s string) error { return ValidRAG("ragStatus", s) })
	if f.RAGStatus, err = validate.Given(has, "ragStatus", req.RAGStatus, checkRAG); err != nil {
		return id, f, err
	}
	f.StartDate, _ = validate.Nullable(has, "startDate", req.StartDate, validate.AsIs)
	f.TargetDate, _ = validate.Nullable(has, "targetDate", req.TargetDate, validate.AsIs)
	return id, f, nil
}

// ParseMember reads the project and user a member request names.
func ParseMember(req MemberRequest) (project, user uuid.UUID, err error) {
	if project, err = ParseID(req.ProjectID); err != nil {
		return project, user, err
	}
	user, err = validate.UserID("userId", req.UserID)
	return project, user, err
}

// MemberRole is the role a member is added with: MEMBER when left out.
func MemberRole(req MemberRequest) (string, error) {
	if req.Role == "" {
		return RoleMember, nil
	}
	return req.Role, ValidRole(req.Role)
}
