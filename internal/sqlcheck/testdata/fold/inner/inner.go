package inner

// Columns is used by another package.
const Columns = "i.id, i.name"
