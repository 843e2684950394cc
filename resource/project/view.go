package project

import (
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
)

// View is a project in the API and in event payloads.
type View struct {
	ID          string     `json:"id" example:"prj_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	Name        string     `json:"name" example:"Line 4 retrofit"`
	Description *string    `json:"description"`
	OwnerID     *string    `json:"ownerId" format:"uuid"`
	RAGStatus   string     `json:"ragStatus" enum:"GREEN,AMBER,RED"`
	StartDate   *Date      `json:"startDate" format:"date"`
	TargetDate  *Date      `json:"targetDate" format:"date"`
	Members     []Member   `json:"members"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	ArchivedAt  *time.Time `json:"archivedAt"`
}

// ToView converts a stored project for the API.
func ToView(p Project) View {
	v := View{
		ID: pmapi.FormatID(IDPrefix, p.ID), Name: p.Name, Description: p.Description, RAGStatus: p.RAGStatus,
		OwnerID: pmapi.FormatOptionalUserID(p.OwnerID), StartDate: p.StartDate, TargetDate: p.TargetDate, Members: p.Members,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt, ArchivedAt: p.ArchivedAt,
	}
	if v.Members == nil {
		v.Members = []Member{}
	}
	return v
}

// List is a page of projects.
type List api.PageOf[View]

// CreateRequest is the body of project creation.
type CreateRequest struct {
	Name        string   `json:"name" example:"Line 4 retrofit"`
	Description *string  `json:"description,omitempty"`
	OwnerID     *string  `json:"ownerId,omitempty" format:"uuid" doc:"A user of the workspace"`
	RAGStatus   string   `json:"ragStatus,omitempty" enum:"GREEN,AMBER,RED" doc:"Default GREEN"`
	StartDate   *Date    `json:"startDate,omitempty" format:"date"`
	TargetDate  *Date    `json:"targetDate,omitempty" format:"date"`
	MemberIDs   []string `json:"memberIds,omitempty" format:"uuid" doc:"Users to add as members (each emits project.member_added)"`
}

// UpdateRequest changes a project: absent fields stay, null clears a nullable one.
type UpdateRequest struct {
	ID          string  `json:"id"`
	Name        *string `json:"name,omitempty" nullable:"false"`
	Description *string `json:"description,omitempty"`
	OwnerID     *string `json:"ownerId,omitempty" format:"uuid"`
	RAGStatus   *string `json:"ragStatus,omitempty" enum:"GREEN,AMBER,RED" nullable:"false"`
	StartDate   *Date   `json:"startDate,omitempty" format:"date"`
	TargetDate  *Date   `json:"targetDate,omitempty" format:"date"`
}

// IDRequest names one project (archive, restore, delete).
type IDRequest struct {
	ID string `json:"id" example:"prj_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
}

// MemberRequest adds or removes a member.
type MemberRequest struct {
	ProjectID string `json:"projectId"`
	UserID    string `json:"userId" format:"uuid"`
	Role      string `json:"role,omitempty" enum:"OWNER,MEMBER,VIEWER" doc:"Default MEMBER (add only)"`
}

// Deleted answers a project delete.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted" enum:"true"`
	// Cascaded counts the children removed with the project, by type, keyed
	// camelCase (tasks, risks, notes, rrcaAnalyses, members).
	Cascaded map[string]int `json:"cascaded"`
}

// MemberEvent is the data of project.member_added and project.member_removed.
type MemberEvent struct {
	ProjectID string `json:"projectId"`
	UserID    string `json:"userId" format:"uuid"`
	Role      string `json:"role" enum:"OWNER,MEMBER,VIEWER"`
}

// DeletedEvent is the data of project.deleted.
type DeletedEvent struct {
	ProjectID string `json:"projectId"`
}
