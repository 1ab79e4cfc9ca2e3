#!/usr/bin/env python3
"""Run MODEL.onnx in ONNX Runtime on DIR/test_data_set_0 and compare.

Usage: ort_data_set.py MODEL.onnx DIR

Prints the model's default-domain opset and "match" or the first mismatch.
"""

import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main(argv):
    model, data = argv[1], argv[2] + "/test_data_set_0"
    m = onnx.load(model)
    onnx.checker.check_model(m, full_check=True)
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    print("opset", opset[0])
    so = ort.SessionOptions()
    so.log_severity_level = 3
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feeds = {i.name: load("%s/input_%d.pb" % (data, k))
             for k, i in enumerate(s.get_inputs())}
    for k, got in enumerate(s.run(None, feeds)):
        want = load("%s/output_%d.pb" % (data, k))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4,
                                                      atol=1e-5):
            print("output %d differs" % k)
            return 1
    print("match")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
