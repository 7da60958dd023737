"""The messages stoker's readers parse, as real protobuf classes: an independent writer for the
tests (stoker parses the wire format itself). The schemas are declared here field for field
from their .proto files, because protoc is not available everywhere the tests run:
- caffe.Datum: BVLC/caffe src/caffe/proto/caffe.proto (proto2)
- caffe2.TensorProto(s): pytorch caffe2/proto/caffe2.proto (proto2; the fields readers use)
- tensorflow.Example: tensorflow/core/example/{example,feature}.proto (proto3)
Tests import this module through pytest.importorskip("google.protobuf") first."""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
_OPT, _REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED


def _message(file, name, fields, nested=()):
    m = file.message_type.add() if hasattr(file, "message_type") else file.nested_type.add()
    m.name = name
    for n in nested:
        n(m)
    for number, fname, label, ftype, extra in fields:
        f = m.field.add()
        f.name, f.number, f.label, f.type = fname, number, label, ftype
        if "type_name" in extra:
            f.type_name = extra["type_name"]
        if "packed" in extra:
            f.options.packed = extra["packed"]
        if "oneof" in extra:
            f.oneof_index = extra["oneof"]
    return m


def _build():
    pool = descriptor_pool.DescriptorPool()

    caffe = descriptor_pb2.FileDescriptorProto(name="caffe.proto", package="caffe",
                                               syntax="proto2")
    _message(caffe, "Datum", [
        (1, "channels", _OPT, F.TYPE_INT32, {}),
        (2, "height", _OPT, F.TYPE_INT32, {}),
        (3, "width", _OPT, F.TYPE_INT32, {}),
        (4, "data", _OPT, F.TYPE_BYTES, {}),
        (5, "label", _OPT, F.TYPE_INT32, {}),
        (6, "float_data", _REP, F.TYPE_FLOAT, {}),
        (7, "encoded", _OPT, F.TYPE_BOOL, {}),
    ])
    pool.Add(caffe)

    caffe2 = descriptor_pb2.FileDescriptorProto(name="caffe2.proto", package="caffe2",
                                                syntax="proto2")
    t = _message(caffe2, "TensorProto", [
        (1, "dims", _REP, F.TYPE_INT64, {}),
        (2, "data_type", _OPT, F.TYPE_ENUM, {"type_name": ".caffe2.TensorProto.DataType"}),
        (3, "float_data", _REP, F.TYPE_FLOAT, {"packed": True}),
        (4, "int32_data", _REP, F.TYPE_INT32, {"packed": True}),
        (5, "byte_data", _OPT, F.TYPE_BYTES, {}),
        (6, "string_data", _REP, F.TYPE_BYTES, {}),
        (7, "name", _OPT, F.TYPE_STRING, {}),
        (9, "double_data", _REP, F.TYPE_DOUBLE, {"packed": True}),
        (10, "int64_data", _REP, F.TYPE_INT64, {"packed": True}),
    ])
    e = t.enum_type.add()
    e.name = "DataType"
    for name, number in [("UNDEFINED", 0), ("FLOAT", 1), ("INT32", 2), ("BYTE", 3),
                         ("STRING", 4), ("BOOL", 5), ("UINT8", 6), ("INT8", 7), ("UINT16", 8),
                         ("INT16", 9), ("INT64", 10), ("FLOAT16", 12), ("DOUBLE", 13)]:
        v = e.value.add()
        v.name, v.number = name, number
    _message(caffe2, "TensorProtos", [
        (1, "protos", _REP, F.TYPE_MESSAGE, {"type_name": ".caffe2.TensorProto"})])
    pool.Add(caffe2)

    tf = descriptor_pb2.FileDescriptorProto(name="example.proto", package="tensorflow",
                                            syntax="proto3")
    _message(tf, "BytesList", [(1, "value", _REP, F.TYPE_BYTES, {})])
    _message(tf, "FloatList", [(1, "value", _REP, F.TYPE_FLOAT, {"packed": True})])
    _message(tf, "Int64List", [(1, "value", _REP, F.TYPE_INT64, {"packed": True})])
    feature = _message(tf, "Feature", [
        (1, "bytes_list", _OPT, F.TYPE_MESSAGE, {"type_name": ".tensorflow.BytesList",
                                                 "oneof": 0}),
        (2, "float_list", _OPT, F.TYPE_MESSAGE, {"type_name": ".tensorflow.FloatList",
                                                 "oneof": 0}),
        (3, "int64_list", _OPT, F.TYPE_MESSAGE, {"type_name": ".tensorflow.Int64List",
                                                 "oneof": 0}),
    ])
    feature.oneof_decl.add().name = "kind"

    def entry(m):
        n = m.nested_type.add()
        n.name = "FeatureEntry"
        n.options.map_entry = True
        for number, fname, ftype, tname in [(1, "key", F.TYPE_STRING, None),
                                            (2, "value", F.TYPE_MESSAGE, ".tensorflow.Feature")]:
            f = n.field.add()
            f.name, f.number, f.label, f.type = fname, number, _OPT, ftype
            if tname:
                f.type_name = tname

    _message(tf, "Features", [
        (1, "feature", _REP, F.TYPE_MESSAGE,
         {"type_name": ".tensorflow.Features.FeatureEntry"})], nested=[entry])
    _message(tf, "Example", [
        (1, "features", _OPT, F.TYPE_MESSAGE, {"type_name": ".tensorflow.Features"})])
    pool.Add(tf)

    def cls(name):
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))

    return (cls("caffe.Datum"), cls("caffe2.TensorProto"), cls("caffe2.TensorProtos"),
            cls("tensorflow.Example"))


Datum, TensorProto, TensorProtos, Example = _build()
