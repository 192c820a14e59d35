//go:build !race

package rulesfile

// worstShapeSize is the size of the files of jsonWorstShapes: the size
// limit (an eighth of it with -race).
const worstShapeSize = maxFileSize
