package api

import "github.com/gofiber/fiber/v2"

// envelope is every success response.
type envelope struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

// respond writes data in the success envelope with status.
func respond(c *fiber.Ctx, status int, data any) error {
	return c.Status(status).JSON(envelope{Success: true, Data: data})
}
