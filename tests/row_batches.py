"""A ``DataIter`` handing over consecutive row slices of in-memory arrays, for tests
that train on an iterator's batches."""

import daskboost


class RowBatches(daskboost.DataIter):
    """Batches of ``rows`` rows: ``input_data(**{field: array[rows of the batch]})`` for
    each ``field=array`` given (``data``, ``label``, ``label_lower_bound``, ...)."""

    def __init__(self, rows, cache_prefix=None, **arrays):
        self.rows, self.arrays, self.position = rows, arrays, 0
        self.n_rows = len(next(iter(arrays.values())))
        super().__init__(cache_prefix=cache_prefix)

    def next(self, input_data):
        start = self.position * self.rows
        if start >= self.n_rows:
            return False
        input_data(**{field: values[start:start + self.rows]
                      for field, values in self.arrays.items()})
        self.position += 1
        return True

    def reset(self):
        self.position = 0
