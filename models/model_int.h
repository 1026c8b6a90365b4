/*
 * model_int.h -- the model struct, private to models/.
 */
#ifndef MODEL_INT_H
#define MODEL_INT_H

#include "common/pp.h"
#include "models/model.h"

struct cJSON;

struct model {
	char name[64];
	char family[32];
	char source[256];
	model_kind kind;
	model_tf tf;
	char warnings[1024]; /* what the loader could not model, one line each ("" when none) */
	char *pattern;       /* a hybrid model's blocks, one of "M*-E" a layer (tf.layers long), or NULL */
	/* CNN */
	model_layer *layers;
	size_t nlayers;
	int64_t in_c, in_h, in_w;
};

/* cnn.c: expands the "layers" list of a CNN document into primitive layers. */
int model_cnn_parse(model *m, const struct cJSON *root, const char *origin, char *err, size_t errlen);

#endif
