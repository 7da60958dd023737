# DALI's video examples (docs/examples/sequence_processing/video and optical flow), with the
# arguments of each, trimmed to the test videos (python/tests/video_fixtures.py):
# - decoders.video (its documentation's examples: every frame, a list of frames, a range with
#   a stride, padding with the last frame or an RGB constant), and its older name
#   experimental.decoders.video, on the CPU; with a clip's frames picked (element_extract,
#   sequence_rearrange) and per-frame arguments (fn.per_frame), as in "Processing video with
#   image processing operators";
# - "Video Reader Simple Example", "Video Reader Label Example" and "Video file list outputs"
#   (readers.video, GPU only in DALI 2.4), with decoders.video on "mixed";
# - "Optical Flow" (fn.optical_flow, GPU only) on the reader's sequences, and on a clip panned
#   across a photo;
# - the new reader fn.experimental.readers.video and fn.experimental.inputs.video (videos fed
#   with feed_input, streamed as sequences) on the CPU (MJPEG: DALI's frames exactly), and
#   fn.readers.video_resize (GPU only in DALI) in the GPU branch.
# DALI 2.4 decodes video on the CPU (decoders.video, experimental.decoders.video) for VP8,
# VP9 and MJPEG only: the CPU part reads the VP9 videos; readers.video and optical_flow have
# only GPU backends in DALI, so they run in the GPU branch (DROPIN_DEVICE_ID).
# Written for nvidia.dali; the folders and the device come from the environment.
import os
import tempfile

import numpy as np

from nvidia.dali import pipeline_def
import nvidia.dali.fn as fn
import nvidia.dali.types as types

video_dir = os.environ["DROPIN_VIDEOS"]
image_dir = os.path.join(os.environ["DROPIN_DATA"], "photos", "dali-imagenet-classes")
device_id = int(os.environ["DROPIN_DEVICE_ID"]) if os.environ.get("DROPIN_DEVICE_ID") else None
RESULTS, COMPARE = {}, {}


def collect(prefix, names, outputs):
    for name, batch in zip(names, outputs):
        batch = batch.as_cpu() if hasattr(batch, "as_cpu") else batch
        samples = RESULTS.setdefault(prefix + name, [])  # (the iterations one after another)
        samples += [np.array(batch.at(i)) for i in range(len(batch))]
        RESULTS[prefix + name + "_layout"] = batch.layout()


# -- decoders.video on the CPU: VP9 ------------------------------------------------------------

cpu_videos = [os.path.join(video_dir, f) for f in ("vp9_smooth.webm", "vp9.webm")]
gains = np.linspace(0.5, 1.5, 8, dtype=np.float32)
angles = np.linspace(-20.0, 20.0, 8, dtype=np.float32)


@pipeline_def(batch_size=len(cpu_videos), num_threads=2, device_id=device_id, seed=7)
def video_decoder_pipeline(device="cpu"):
    encoded, _ = fn.readers.file(files=cpu_videos)
    every = fn.decoders.video(encoded, device=device)
    chosen = fn.decoders.video(encoded, device=device, frames=[0, 10, 20, 10, 0, 29])
    strided = fn.experimental.decoders.video(encoded, device=device, start_frame=0,
                                             end_frame=20, stride=2)
    edge = fn.decoders.video(encoded, device=device, start_frame=24, sequence_length=8,
                             stride=1, pad_mode="edge")
    constant = fn.decoders.video(encoded, device=device, start_frame=26, sequence_length=8,
                                 pad_mode="constant", fill_value=[118, 185, 0])
    # A clip of 8 frames, its frames picked and processed with per-frame arguments.
    clip = fn.decoders.video(encoded, device=device, start_frame=4, sequence_length=8, stride=3)
    first, last = fn.element_extract(clip, element_map=[0, 7])
    rearranged = fn.sequence_rearrange(clip, new_order=[7, 6, 5, 4, 3, 2, 1, 0, 0])
    gain = fn.external_source(source=lambda: [gains] * len(cpu_videos), batch=True)
    angle = fn.external_source(source=lambda: [angles] * len(cpu_videos), batch=True)
    brighter = fn.brightness(clip, brightness=fn.per_frame(gain))
    rotated = fn.rotate(clip, angle=fn.per_frame(angle), keep_size=True, fill_value=0)
    return (every, chosen, strided, edge, constant, clip, first, last, rearranged, brighter,
            rotated)


DECODER_NAMES = ["video", "frames", "strided", "pad_edge", "pad_constant", "clip",
                 "element_extract_first", "element_extract_last", "sequence_rearrange",
                 "per_frame_brightness", "per_frame_rotate"]
pipe = video_decoder_pipeline(device="cpu")
pipe.build()
collect("cpu_", DECODER_NAMES, pipe.run())
# The same frames, converted to RGB each its own way (DALI: libswscale's defaults; stoker:
# chroma sited as the stream says, docs/dali_differences.md): within 1.5 levels on average on
# the smooth video (test_parity_video_decoder.py, test_parity_video_reader.py), more at the
# sharp colour edges of the plain test pattern (test_parity_video_reader.py's SHARP: 6).
for name in DECODER_NAMES:
    smooth, sharp = RESULTS.pop("cpu_" + name)
    RESULTS["cpu_" + name + "_vp9_smooth"], RESULTS["cpu_" + name + "_vp9"] = smooth, sharp
    COMPARE["cpu_" + name + "_vp9_smooth"] = ("mean_abs", 1.5)
    COMPARE["cpu_" + name + "_vp9"] = ("mean_abs", 6)
# Which frames, how many, and the padding: the constant frames exactly.
RESULTS["cpu_frame_counts"] = [len(RESULTS[f"cpu_{name}_{v}"]) for name in DECODER_NAMES
                               for v in ("vp9_smooth", "vp9")
                               if RESULTS[f"cpu_{name}_layout"] == "FHWC"]
RESULTS["cpu_padding"] = [RESULTS[f"cpu_pad_constant_{v}"][-4:] for v in ("vp9_smooth", "vp9")]
# The frames element_extract and sequence_rearrange pick: the clip's own, exactly.
RESULTS["cpu_picked_frames"] = [
    (np.array_equal(RESULTS[f"cpu_element_extract_first_{v}"], RESULTS[f"cpu_clip_{v}"][0]),
     np.array_equal(RESULTS[f"cpu_element_extract_last_{v}"], RESULTS[f"cpu_clip_{v}"][7]),
     np.array_equal(RESULTS[f"cpu_sequence_rearrange_{v}"],
                    RESULTS[f"cpu_clip_{v}"][[7, 6, 5, 4, 3, 2, 1, 0, 0]]))
    for v in ("vp9_smooth", "vp9")]


# -- experimental.readers.video and experimental.inputs.video on the CPU: MJPEG ---------------

mjpeg_videos = [os.path.join(video_dir, f) for f in ("mjpeg.avi", "mjpeg422.mkv")]


@pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=12)
def new_reader_pipeline():
    video, labels, frame_num, timestamps = fn.experimental.readers.video(
        filenames=mjpeg_videos, labels=[3, 5], sequence_length=6, stride=2, step=4,
        pad_mode="edge", enable_frame_num="sequence", enable_timestamps=True,
        random_shuffle=True, initial_fill=1, name="NewReader")
    uniform, uniform_frames = fn.experimental.readers.video(
        filenames=mjpeg_videos, sequence_length=5, uniform_sample=True, enable_frame_num=True)
    flipped = fn.flip(video, horizontal=1)
    return video, labels, frame_num, timestamps, uniform, uniform_frames, flipped


pipe = new_reader_pipeline()
pipe.build()
for _ in range(3):
    collect("new_reader_", ["video", "label", "frame_num", "timestamps", "uniform",
                            "uniform_frame_num", "flipped"], pipe.run())
RESULTS["new_reader_epoch_size"] = pipe.epoch_size("NewReader")


@pipeline_def(batch_size=3, num_threads=2, device_id=None)
def video_input_pipeline():
    return fn.experimental.inputs.video(name="video_input", sequence_length=4,
                                        last_sequence_policy="pad")


pipe = video_input_pipeline()
pipe.build()
for path in mjpeg_videos:
    pipe.feed_input("video_input", [np.fromfile(path, dtype=np.uint8)])
for _ in range(6):
    collect("video_input_", ["sequences"], pipe.run())


# -- GPU: readers.video, decoders.video on "mixed", optical_flow -------------------------------

if device_id is not None:
    # Video Reader Simple Example: sequences of 8 frames from the files in order (the example
    # shuffles: shuffled orders differ by design); the label example's labels, frame numbers
    # and timestamps.
    # (DALI's reader takes files of one codec: two H.264 files of one size.)
    gpu_videos = [os.path.join(video_dir, f) for f in ("h264_smooth.mp4", "h264_big.mp4")]
    sequence_length = 8

    @pipeline_def(batch_size=2, num_threads=2, device_id=device_id, seed=123456)
    def video_pipe(filenames):
        videos, labels, frame_num, timestamps = fn.readers.video(
            device="gpu", filenames=filenames, labels=[0, 1], sequence_length=sequence_length,
            step=5, shard_id=0, num_shards=1, random_shuffle=False, initial_fill=16,
            enable_frame_num=True, enable_timestamps=True, name="Reader")
        return videos, labels, frame_num, timestamps

    pipe = video_pipe(filenames=gpu_videos)
    pipe.build()
    for _ in range(3):
        collect("reader_", ["video", "label", "frame_num", "timestamps"], pipe.run())
    # NVDEC's frames against FFmpeg's, converted to RGB with chroma sited each its own way:
    # within 1.5 levels on average on smooth videos (test_parity_video_reader.py), 1.97 on
    # h264_big's sharp pattern (H200, November 2026).
    COMPARE["reader_video"] = ("mean_abs", 3.0)
    COMPARE["reader_timestamps"] = ("tolerance", 1e-6)

    # Video file list outputs: a file list of frame ranges, each with its label.
    list_dir = tempfile.mkdtemp(prefix="file_list_")
    file_list = os.path.join(list_dir, "file_list.txt")
    with open(file_list, "w") as f:
        f.write(f"{gpu_videos[0]} 0 0 12\n{gpu_videos[1]} 1 6 24\n{gpu_videos[0]} 2 14 30\n")

    @pipeline_def(batch_size=2, num_threads=2, device_id=device_id, seed=123456)
    def file_list_pipe():
        videos, labels, frame_num = fn.readers.video(
            device="gpu", file_list=file_list, sequence_length=4, file_list_frame_num=True,
            enable_frame_num=True, random_shuffle=False, name="Reader")
        return videos, labels, frame_num

    pipe = file_list_pipe()
    pipe.build()
    for _ in range(2):
        collect("file_list_", ["video", "label", "frame_num"], pipe.run())
    COMPARE["file_list_video"] = ("mean_abs", 3.0)  # (as reader_video: h264_big is sharp)
    os.remove(file_list)
    os.rmdir(list_dir)

    # decoders.video on "mixed" (NVDEC): H.264, HEVC and VP9 (the smooth videos).
    mixed_videos = [os.path.join(video_dir, f)
                    for f in ("h264_smooth.mp4", "hevc_smooth.mkv", "vp9_smooth.webm")]

    @pipeline_def(batch_size=len(mixed_videos), num_threads=2, device_id=device_id, seed=7)
    def mixed_decoder_pipeline():
        encoded, _ = fn.readers.file(files=mixed_videos)
        return (fn.decoders.video(encoded, device="mixed", start_frame=2, sequence_length=10,
                                  stride=2, pad_mode="edge"),
                fn.decoders.video(encoded, device="mixed", frames=[5, 1, 3, 0]))

    pipe = mixed_decoder_pipeline()
    pipe.build()
    collect("mixed_", ["video_range", "video_frames"], pipe.run())

    # readers.video_resize: the reader's sequences resized on the GPU, per-sample sizes too.
    @pipeline_def(batch_size=2, num_threads=2, device_id=device_id, seed=5)
    def video_resize_pipe():
        videos, labels = fn.readers.video_resize(
            device="gpu", filenames=gpu_videos, labels=[0, 1], sequence_length=4, step=6,
            size=[96, 128], interp_type=types.INTERP_LINEAR, name="Reader")
        shorter = fn.readers.video_resize(device="gpu", filenames=gpu_videos,
                                          sequence_length=2, resize_shorter=60,
                                          random_shuffle=False)
        return videos, labels, shorter

    pipe = video_resize_pipe()
    pipe.build()
    for _ in range(2):
        collect("video_resize_", ["video", "label", "shorter"], pipe.run())
    # The reader's frames (above) through each library's resampling.
    COMPARE["video_resize_video"] = COMPARE["video_resize_shorter"] = ("mean_abs", 3.0)
    # NVDEC in both, each converting to RGB its own way (as readers.video above).
    COMPARE["mixed_video_range"] = COMPARE["mixed_video_frames"] = ("mean_abs", 1.5)

    # Optical Flow: the reader's sequences through the optical-flow engine (4x4 grid).
    @pipeline_def(batch_size=1, num_threads=1, device_id=device_id, seed=16)
    def of_pipeline():
        seq = fn.readers.video(device="gpu", filenames=gpu_videos[0],
                               sequence_length=10, name="Reader")
        return fn.optical_flow(seq.gpu(), device="gpu", output_grid=4)

    pipe = of_pipeline()
    pipe.build()
    collect("reader_", ["optical_flow"], pipe.run())
    # The frames differ from DALI's by the RGB conversion (above), so the vectors the engine
    # finds differ where it matches them: the shape only. The vectors are compared on equal
    # frames below.
    COMPARE["reader_optical_flow"] = "shape"

    # The same engine on clips both libraries make bit for bit: 4 frames panned across each
    # photo (decoders.image_crop), presets and temporal hints as the example's options.
    @pipeline_def(batch_size=2, num_threads=2, device_id=device_id, seed=16)
    def panned_of_pipeline():
        jpegs, _ = fn.readers.file(file_root=image_dir)
        clip = fn.stack(*[fn.decoders.image_crop(jpegs, crop=(96, 128), crop_pos_x=0.4 + 0.01 * k,
                                                 crop_pos_y=0.5 - 0.005 * k)
                          for k in range(4)], axis=0, axis_name="F")
        clip = clip.gpu()
        return (clip,
                fn.optical_flow(clip, output_grid=4),
                fn.optical_flow(clip, preset=0.5, output_grid=4),
                fn.optical_flow(clip, preset=1.0, enable_temporal_hints=True))

    pipe = panned_of_pipeline()
    pipe.build()
    collect("panned_", ["clip", "optical_flow", "optical_flow_medium", "optical_flow_hints"],
            pipe.run())
