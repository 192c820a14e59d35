//go:build race

package rulesfile

// worstShapeSize is the size of the files of jsonWorstShapes: with the
// race detector, which makes reading them about 10 times slower, an
// eighth of the size limit.
const worstShapeSize = maxFileSize / 8
